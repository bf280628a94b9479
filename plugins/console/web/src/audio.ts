/**
 * Audio in the browser for the playground: reading `POST /tts/stream`'s
 * frames (4-byte big-endian length, then the frame; a zero length ends a
 * complete stream), joining WAV, PCM and mu-law frames into one file,
 * and playing the audio while it arrives.
 */

export interface WavInfo {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  dataOffset: number;
  dataLength: number;
}

/** The fmt and data chunks of a WAV file; null when it is not one. */
export function parseWav(bytes: Uint8Array): WavInfo | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (at: number) => String.fromCharCode(bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]);
  if (bytes.length < 12 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE') return null;
  let at = 12;
  let fmt: Omit<WavInfo, 'dataOffset' | 'dataLength'> | null = null;
  while (at + 8 <= bytes.length) {
    const id = tag(at);
    const size = view.getUint32(at + 4, true);
    if (id === 'fmt ') fmt = { channels: view.getUint16(at + 10, true), sampleRate: view.getUint32(at + 12, true), bitsPerSample: view.getUint16(at + 22, true) };
    if (id === 'data') return fmt ? { ...fmt, dataOffset: at + 8, dataLength: Math.min(size, bytes.length - at - 8) } : null;
    at += 8 + size + (size % 2);
  }
  return null;
}

/** One WAV file (16-bit mono) around PCM chunks. */
export function pcmToWav(chunks: Uint8Array[], sampleRate: number): Blob {
  const length = chunks.reduce((n, c) => n + c.length, 0);
  const header = new ArrayBuffer(44);
  const v = new DataView(header);
  const text = (at: number, s: string) => [...s].forEach((c, i) => v.setUint8(at + i, c.charCodeAt(0)));
  text(0, 'RIFF');
  v.setUint32(4, 36 + length, true);
  text(8, 'WAVE');
  text(12, 'fmt ');
  v.setUint32(16, 16, true);
  v.setUint16(20, 1, true);
  v.setUint16(22, 1, true);
  v.setUint32(24, sampleRate, true);
  v.setUint32(28, sampleRate * 2, true);
  v.setUint16(32, 2, true);
  v.setUint16(34, 16, true);
  text(36, 'data');
  v.setUint32(40, length, true);
  return new Blob([header, ...chunks.map((c) => c.slice().buffer)], { type: 'audio/wav' });
}

/** G.711 mu-law bytes to 16-bit little-endian PCM. */
export function ulawToPcm(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length * 2);
  const view = new DataView(out.buffer);
  bytes.forEach((byte, i) => {
    const u = ~byte & 0xff;
    const exponent = (u >> 4) & 0x07;
    const magnitude = ((((u & 0x0f) << 3) + 0x84) << exponent) - 0x84;
    view.setInt16(i * 2, u & 0x80 ? -magnitude : magnitude, true);
  });
  return out;
}

/**
 * Reads a framed stream, calling `onFrame` for each frame; resolves true
 * when the zero-length end marker arrived (the only proof of a complete
 * stream), false when the body stopped without it.
 */
export async function readFrames(body: ReadableStream<Uint8Array>, onFrame: (frame: Uint8Array) => void): Promise<boolean> {
  const reader = body.getReader();
  let buffered = new Uint8Array(0);
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return false;
    const joined = new Uint8Array(buffered.length + value.length);
    joined.set(buffered);
    joined.set(value, buffered.length);
    buffered = joined;
    while (buffered.length >= 4) {
      const length = new DataView(buffered.buffer, buffered.byteOffset, 4).getUint32(0, false);
      if (length === 0) {
        await reader.cancel().catch(() => undefined);
        return true;
      }
      if (buffered.length < 4 + length) break;
      onFrame(buffered.slice(4, 4 + length));
      buffered = buffered.slice(4 + length);
    }
  }
}

/** Plays 16-bit mono PCM as it arrives, each chunk scheduled right after the previous one. */
export class LivePlayer {
  private context: AudioContext | null = null;
  private next = 0;
  private carry: Uint8Array | null = null;

  /** create on a click: browsers allow sound only after a gesture */
  start(): void {
    try {
      this.context = new AudioContext();
      this.next = this.context.currentTime + 0.1;
    } catch {
      this.context = null;
    }
  }

  push(pcm: Uint8Array, sampleRate: number): void {
    if (!this.context) return;
    let bytes = pcm;
    if (this.carry) {
      bytes = new Uint8Array(this.carry.length + pcm.length);
      bytes.set(this.carry);
      bytes.set(pcm, this.carry.length);
      this.carry = null;
    }
    // A frame of raw PCM may end inside a sample: keep the odd byte for the next one.
    if (bytes.length % 2) {
      this.carry = bytes.slice(bytes.length - 1);
      bytes = bytes.subarray(0, bytes.length - 1);
    }
    if (bytes.length === 0) return;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const samples = new Float32Array(bytes.length / 2);
    for (let i = 0; i < samples.length; i++) samples[i] = view.getInt16(i * 2, true) / 32768;
    const buffer = this.context.createBuffer(1, samples.length, sampleRate);
    buffer.copyToChannel(samples, 0);
    const source = this.context.createBufferSource();
    source.buffer = buffer;
    source.connect(this.context.destination);
    const at = Math.max(this.next, this.context.currentTime + 0.02);
    source.start(at);
    this.next = at + buffer.duration;
  }

  stop(): void {
    void this.context?.close().catch(() => undefined);
    this.context = null;
    this.carry = null;
  }
}
