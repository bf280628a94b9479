/**
 * Linear-interpolation resampler for s16le mono that keeps its position
 * across chunks, so a stream resampled piecewise is sample-for-sample the
 * same as the whole buffer resampled at once (no clicks at chunk seams).
 * Speech from espeak (22050 Hz) to 8-48 kHz does not need more.
 */
import { SampleAligner } from './pcm.ts';

export class LinearResampler {
  private readonly aligner = new SampleAligner();
  /**
   * Position of the next output sample in input samples, kept as an integer
   * count of 1/outputRate steps: exact, so chunk seams cannot drift.
   */
  private positionNum = 0;
  /** last sample of the previous chunk, at relative index -1 */
  private previous = 0;

  constructor(readonly inputRate: number, readonly outputRate: number) {
    if (!(Number.isInteger(inputRate) && Number.isInteger(outputRate) && inputRate > 0 && outputRate > 0)) {
      throw new RangeError('sample rates must be positive integers');
    }
  }

  push(chunk: Buffer): Buffer {
    const pcm = this.aligner.push(chunk);
    if (this.inputRate === this.outputRate) return pcm;
    const n = pcm.length >> 1;
    if (n === 0) return Buffer.alloc(0);
    const { inputRate: step, outputRate: den } = this;
    const sampleAt = (i: number) => (i < 0 ? this.previous : pcm.readInt16LE(i * 2));
    const lastNum = (n - 1) * den;
    const count = this.positionNum > lastNum ? 0 : Math.floor((lastNum - this.positionNum) / step) + 1;
    const out = Buffer.allocUnsafe(count * 2);
    for (let k = 0; k < count; k++) {
      const num = this.positionNum + k * step;
      const i = Math.floor(num / den);
      const rem = num - i * den;
      const a = sampleAt(i);
      const v = rem === 0 ? a : a + ((sampleAt(i + 1) - a) * rem) / den;
      out.writeInt16LE(Math.round(v), k * 2);
    }
    this.positionNum += count * step - n * den;
    this.previous = pcm.readInt16LE((n - 1) * 2);
    return out;
  }
}

/** Resamples a whole buffer. */
export function resamplePcm(pcm: Buffer, inputRate: number, outputRate: number): Buffer {
  return new LinearResampler(inputRate, outputRate).push(pcm);
}
