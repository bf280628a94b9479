/** Helpers for signed 16-bit little-endian mono PCM, the format every engine yields. */

export const BYTES_PER_SAMPLE = 2;

/** Float samples in [-1, 1] (ONNX vocoders) to s16le, clipping out-of-range values. */
export function floatToPcm16(samples: Float32Array): Buffer {
  const out = Buffer.allocUnsafe(samples.length * 2);
  for (let i = 0; i < samples.length; i++) {
    const v = Math.max(-1, Math.min(1, samples[i]));
    out.writeInt16LE(Math.round(v < 0 ? v * 32768 : v * 32767), i * 2);
  }
  return out;
}

export function pcm16ToFloat(pcm: Buffer): Float32Array {
  const n = pcm.length >> 1;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = pcm.readInt16LE(i * 2) / 32768;
  return out;
}

export function silence(ms: number, sampleRate: number): Buffer {
  return Buffer.alloc(Math.round((ms / 1000) * sampleRate) * BYTES_PER_SAMPLE);
}

export function pcmDurationSeconds(bytes: number, sampleRate: number): number {
  return bytes / BYTES_PER_SAMPLE / sampleRate;
}

/** Largest absolute sample, 0 to 1. */
export function peakLevel(pcm: Buffer): number {
  let peak = 0;
  for (let i = 0; i + 1 < pcm.length; i += 2) peak = Math.max(peak, Math.abs(pcm.readInt16LE(i)));
  return peak / 32768;
}

/** Root mean square level, 0 to 1; 0 for empty input. */
export function rmsLevel(pcm: Buffer): number {
  const n = pcm.length >> 1;
  if (n === 0) return 0;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const v = pcm.readInt16LE(i * 2) / 32768;
    sum += v * v;
  }
  return Math.sqrt(sum / n);
}

/**
 * Network and pipe reads split buffers anywhere, including between the two
 * bytes of a sample; this carries the odd byte over to the next chunk.
 */
export class SampleAligner {
  private carry: Buffer | null = null;

  push(chunk: Buffer): Buffer {
    const buf = this.carry ? Buffer.concat([this.carry, chunk]) : chunk;
    const even = buf.length - (buf.length % 2);
    this.carry = even < buf.length ? Buffer.from(buf.subarray(even)) : null;
    return buf.subarray(0, even);
  }

  /** True when a half sample is left over (a truncated stream). */
  get pending(): boolean {
    return this.carry !== null;
  }
}
