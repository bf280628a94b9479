/**
 * Spectrum measurements for audio tests: a radix-2 FFT over Hann-windowed,
 * half-overlapping frames, summed into the energy above and below a
 * frequency.
 */

function fft(re: Float64Array, im: Float64Array): void {
  const n = re.length;
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      [re[i], re[j]] = [re[j], re[i]];
      [im[i], im[j]] = [im[j], im[i]];
    }
  }
  for (let len = 2; len <= n; len <<= 1) {
    const angle = (-2 * Math.PI) / len;
    const wr = Math.cos(angle);
    const wi = Math.sin(angle);
    for (let i = 0; i < n; i += len) {
      let cr = 1;
      let ci = 0;
      for (let k = 0; k < len / 2; k++) {
        const a = i + k;
        const b = a + len / 2;
        const xr = re[b] * cr - im[b] * ci;
        const xi = re[b] * ci + im[b] * cr;
        re[b] = re[a] - xr;
        im[b] = im[a] - xi;
        re[a] += xr;
        im[a] += xi;
        const next = cr * wr - ci * wi;
        ci = cr * wi + ci * wr;
        cr = next;
      }
    }
  }
}

/** Energy of s16le mono above `hz` relative to all of it, in dB (−Infinity when none). */
export function energyAboveDb(pcm: Buffer, sampleRate: number, hz: number, frame = 4096): number {
  const n = pcm.length >> 1;
  const window = Float64Array.from({ length: frame }, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / frame));
  let above = 0;
  let total = 0;
  for (let start = 0; start + frame <= n; start += frame / 2) {
    const re = new Float64Array(frame);
    const im = new Float64Array(frame);
    for (let i = 0; i < frame; i++) re[i] = pcm.readInt16LE((start + i) * 2) * window[i];
    fft(re, im);
    for (let k = 0; k <= frame / 2; k++) {
      const power = re[k] * re[k] + im[k] * im[k];
      total += power;
      if ((k * sampleRate) / frame > hz) above += power;
    }
  }
  return 10 * Math.log10(above / total);
}

/** A linear sine sweep as s16le mono. */
export function sweep(seconds: number, sampleRate: number, fromHz: number, toHz: number, amplitude = 0.5): Buffer {
  const n = Math.round(seconds * sampleRate);
  const out = Buffer.alloc(n * 2);
  let phase = 0;
  for (let i = 0; i < n; i++) {
    phase += (2 * Math.PI * (fromHz + ((toHz - fromHz) * i) / n)) / sampleRate;
    out.writeInt16LE(Math.round(amplitude * 32767 * Math.sin(phase)), i * 2);
  }
  return out;
}
