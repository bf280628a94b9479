/**
 * Band-limited sample-rate conversion of s16le mono with the Speex
 * resampler (WASM, `speex-wasm.ts`): a windowed-sinc filter whose stopband
 * starts at the lower rate's Nyquist frequency, so upsampling espeak's
 * 22,050 Hz to 48,000 Hz leaves no images above 11 kHz and downsampling
 * does not alias. The filter state persists across `push` calls, so a
 * stream resampled piecewise equals the whole buffer resampled at once;
 * `flush` drains the filter's delay at the end. Each instance holds a few
 * kilobytes of WASM memory until `close` (or `flush`).
 */
import { SampleAligner } from './pcm.ts';
import { speex } from './speex-wasm.ts';

/**
 * Speex quality (0-10) by output rate. On a 50 Hz-10 kHz sweep from
 * 22,050 Hz (test/unit/resample.test.ts), the energy left above 11,025 Hz
 * is, for quality 1 / 2 / 3: −67 / −81 / −98 dB at 24 kHz, −63 / −66 / −89 dB
 * at 48 kHz, for 4.6 / 7.1 / 9.3 ms and 8.7 / 12.6 / 18.2 ms per 13 s of
 * audio. Each rate gets the cheapest quality that keeps images at least
 * 66 dB down: 1 up to 24 kHz, 2 above.
 */
export function qualityFor(outputRate: number): number {
  return outputRate <= 24_000 ? 1 : 2;
}

/** Input samples per WASM call; buffers are shared by every resampler (calls are synchronous). */
const BLOCK = 16_384;
const MAX_RATIO = 192_000 / 4000;

let inPtr = 0;
let outPtr = 0;
let lenPtr = 0;
function buffers(): void {
  if (inPtr) return;
  inPtr = speex._malloc(BLOCK * 2);
  outPtr = speex._malloc(Math.ceil(BLOCK * MAX_RATIO + 64) * 2);
  lenPtr = speex._malloc(8);
}

const states = new FinalizationRegistry<number>((state) => speex._speex_resampler_destroy(state));

export class Resampler {
  private readonly aligner = new SampleAligner();
  private state = 0;
  /** input samples taken and output samples given, for an exact total length at the end */
  private samplesIn = 0;
  private samplesOut = 0;

  constructor(readonly inputRate: number, readonly outputRate: number, quality = qualityFor(outputRate)) {
    if (!(Number.isInteger(inputRate) && Number.isInteger(outputRate) && inputRate > 0 && outputRate > 0)) {
      throw new RangeError('sample rates must be positive integers');
    }
    if (inputRate === outputRate) return;
    buffers();
    this.state = speex._speex_resampler_init(1, inputRate, outputRate, quality, lenPtr);
    if (!this.state) throw new Error(`speex resampler refused ${inputRate} → ${outputRate} Hz`);
    // Output starts with the first input sample rather than the filter's delay of silence.
    speex._speex_resampler_skip_zeros(this.state);
    states.register(this, this.state, this);
  }

  /** Resamples the next piece; pieces may split a sample. */
  push(chunk: Buffer): Buffer {
    const pcm = this.aligner.push(chunk);
    if (this.inputRate === this.outputRate) return pcm;
    if (!this.state) throw new Error('resampler already closed');
    const n = pcm.length >> 1;
    if (n === 0) return Buffer.alloc(0);
    this.samplesIn += n;
    const parts: Buffer[] = [];
    for (let offset = 0; offset < n; offset += BLOCK) this.process(pcm.subarray(offset * 2, Math.min(n, offset + BLOCK) * 2), parts);
    return parts.length === 1 ? parts[0] : Buffer.concat(parts);
  }

  /** The last samples held in the filter; the resampler is closed afterwards. */
  flush(): Buffer {
    if (this.inputRate === this.outputRate || !this.state) return Buffer.alloc(0);
    const expected = Math.round((this.samplesIn * this.outputRate) / this.inputRate);
    const before = this.samplesOut;
    const parts: Buffer[] = [];
    const latency = speex._speex_resampler_get_input_latency(this.state);
    this.process(Buffer.alloc(latency * 2 + 4), parts);
    this.close();
    const tail = Buffer.concat(parts);
    const keep = Math.max(0, Math.min(expected - before, tail.length >> 1));
    this.samplesOut = before + keep;
    return tail.subarray(0, keep * 2);
  }

  close(): void {
    if (!this.state) return;
    states.unregister(this);
    speex._speex_resampler_destroy(this.state);
    this.state = 0;
  }

  private process(pcm: Buffer, parts: Buffer[]): void {
    let remaining = pcm;
    while (remaining.length >= 2) {
      const inSamples = remaining.length >> 1;
      const outCapacity = Math.ceil((inSamples * this.outputRate) / this.inputRate) + 64;
      speex.HEAPU8.set(remaining, inPtr);
      speex.HEAPU32[lenPtr >> 2] = inSamples;
      speex.HEAPU32[(lenPtr >> 2) + 1] = outCapacity;
      speex._speex_resampler_process_int(this.state, 0, inPtr, lenPtr, outPtr, lenPtr + 4);
      const consumed = speex.HEAPU32[lenPtr >> 2];
      const produced = speex.HEAPU32[(lenPtr >> 2) + 1];
      if (produced > 0) parts.push(Buffer.from(speex.HEAPU8.subarray(outPtr, outPtr + produced * 2)));
      this.samplesOut += produced;
      if (consumed === 0 && produced === 0) break;
      remaining = remaining.subarray(consumed * 2);
    }
  }
}

/** Resamples a whole buffer, tail included. */
export function resamplePcm(pcm: Buffer, inputRate: number, outputRate: number): Buffer {
  if (inputRate === outputRate) return pcm;
  const r = new Resampler(inputRate, outputRate);
  const body = r.push(pcm);
  return Buffer.concat([body, r.flush()]);
}
