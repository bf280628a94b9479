/**
 * Linear-interpolation resampler for s16le mono that keeps its position
 * across chunks, so a stream resampled piecewise is sample-for-sample the
 * same as the whole buffer resampled at once (no clicks at chunk seams).
 * Speech from espeak (22050 Hz) to 8-48 kHz does not need more. It runs on
 * the event loop for every synthesis, so it works on Int16Array views
 * (about ten times faster than Buffer reads and writes).
 */
import { SampleAligner } from './pcm.ts';

/** An Int16Array over the samples; copies only when the bytes are not 2-aligned in their ArrayBuffer. */
function samplesOf(pcm: Buffer): Int16Array {
  if (pcm.byteOffset % 2 === 0) return new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length >> 1);
  const copy = Buffer.from(pcm);
  return new Int16Array(copy.buffer, copy.byteOffset, copy.length >> 1);
}

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
    const input = samplesOf(pcm);
    const { inputRate: step, outputRate: den } = this;
    const lastNum = (n - 1) * den;
    const count = this.positionNum > lastNum ? 0 : Math.floor((lastNum - this.positionNum) / step) + 1;
    const out = Buffer.allocUnsafe(count * 2);
    const output = new Int16Array(out.buffer, out.byteOffset, count);
    const previous = this.previous;
    let num = this.positionNum;
    for (let k = 0; k < count; k++, num += step) {
      const i = Math.floor(num / den);
      const rem = num - i * den;
      const a = i < 0 ? previous : input[i];
      const v = rem === 0 ? a : a + (((i + 1 < 0 ? previous : input[i + 1]) - a) * rem) / den;
      output[k] = Math.round(v);
    }
    this.positionNum += count * step - n * den;
    this.previous = input[n - 1];
    return out;
  }
}

/** Resamples a whole buffer. */
export function resamplePcm(pcm: Buffer, inputRate: number, outputRate: number): Buffer {
  return new LinearResampler(inputRate, outputRate).push(pcm);
}
