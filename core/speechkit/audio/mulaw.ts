/**
 * G.711 mu-law in pure TypeScript: telephony output needs no encoder
 * process, so `ulaw` stays available even where ffmpeg is missing.
 */

const BIAS = 0x84;
const CLIP = 32635;

export function linearToMulaw(sample: number): number {
  let s = sample;
  const sign = s < 0 ? 0x80 : 0;
  if (sign) s = -s;
  if (s > CLIP) s = CLIP;
  s += BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (s & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (s >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

export function mulawToLinear(byte: number): number {
  const u = ~byte & 0xff;
  const exponent = (u >> 4) & 0x07;
  const magnitude = ((((u & 0x0f) << 3) + BIAS) << exponent) - BIAS;
  return u & 0x80 ? -magnitude : magnitude;
}

/** s16le mono → one mu-law byte per sample. A trailing odd byte is ignored. */
export function encodeMulaw(pcm: Buffer): Buffer {
  const n = pcm.length >> 1;
  const out = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) out[i] = linearToMulaw(pcm.readInt16LE(i * 2));
  return out;
}

export function decodeMulaw(bytes: Buffer): Buffer {
  const out = Buffer.allocUnsafe(bytes.length * 2);
  for (let i = 0; i < bytes.length; i++) out.writeInt16LE(mulawToLinear(bytes[i]), i * 2);
  return out;
}
