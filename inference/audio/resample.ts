/**
 * Linear-interpolation resampler for s16le mono that keeps its position
 * across chunks, so a stream resampled piecewise is sample-for-sample the
 * same as the whole buffer resampled at once (no clicks at chunk seams).
 * Speech from espeak (22050 Hz) to 8-48 kHz does not need more.
 */
import { SampleAligner } from './pcm.ts';

export class LinearResampler {
  private readonly step: number;
  private readonly aligner = new SampleAligner();
  /** position of the next output sample, in input samples relative to the current chunk */
  private position = 0;
  /** last sample of the previous chunk, at relative index -1 */
  private previous = 0;

  constructor(readonly inputRate: number, readonly outputRate: number) {
    if (!(inputRate > 0 && outputRate > 0)) throw new RangeError('sample rates must be positive');
    this.step = inputRate / outputRate;
  }

  push(chunk: Buffer): Buffer {
    const pcm = this.aligner.push(chunk);
    if (this.inputRate === this.outputRate) return pcm;
    const n = pcm.length >> 1;
    if (n === 0) return Buffer.alloc(0);
    // Clamped: rounding can put the last position a hair past the final sample.
    const sampleAt = (i: number) => (i < 0 ? this.previous : pcm.readInt16LE(Math.min(i, n - 1) * 2));
    const count = Math.max(0, Math.floor((n - 1 - this.position) / this.step) + 1);
    const out = Buffer.allocUnsafe(count * 2);
    let pos = this.position;
    for (let k = 0; k < count; k++, pos = this.position + k * this.step) {
      const i = Math.floor(pos);
      const frac = pos - i;
      const a = sampleAt(i);
      const v = frac === 0 ? a : a + (sampleAt(i + 1) - a) * frac;
      out.writeInt16LE(Math.round(v), k * 2);
    }
    this.position = this.position + count * this.step - n;
    this.previous = pcm.readInt16LE((n - 1) * 2);
    return out;
  }
}

/** Resamples a whole buffer. */
export function resamplePcm(pcm: Buffer, inputRate: number, outputRate: number): Buffer {
  return new LinearResampler(inputRate, outputRate).push(pcm);
}
