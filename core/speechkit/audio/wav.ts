/**
 * RIFF/WAVE header helpers. A stream's length is unknown when its header is
 * sent, so streamed WAV carries the same large placeholder size espeak-ng
 * uses; players and ffprobe then read to the end of the data.
 */

export const WAV_HEADER_BYTES = 44;
/** Placeholder data size for streams whose length is not known up front. */
export const STREAMING_DATA_BYTES = 0x7ffff000;

export interface WavFormat {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  /** 1 = integer PCM, 3 = IEEE float, 7 = mu-law */
  audioFormat: number;
}

export interface WavInfo extends WavFormat {
  /** byte offset where sample data starts */
  dataOffset: number;
  /** declared data size; STREAMING_DATA_BYTES-like values mean "until the end" */
  dataBytes: number;
}

const PCM16_MONO: Omit<WavFormat, 'sampleRate'> = { channels: 1, bitsPerSample: 16, audioFormat: 1 };

/** A 44-byte canonical header; pass `null` for a stream of unknown length. */
export function wavHeader(dataBytes: number | null, sampleRate: number, format: Partial<Omit<WavFormat, 'sampleRate'>> = {}): Buffer {
  const { channels, bitsPerSample, audioFormat } = { ...PCM16_MONO, ...format };
  const size = dataBytes ?? STREAMING_DATA_BYTES;
  const blockAlign = (channels * bitsPerSample) / 8;
  const h = Buffer.alloc(WAV_HEADER_BYTES);
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(Math.min(size + 36, 0xffffffff), 4);
  h.write('WAVE', 8, 'ascii');
  h.write('fmt ', 12, 'ascii');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(audioFormat, 20);
  h.writeUInt16LE(channels, 22);
  h.writeUInt32LE(sampleRate, 24);
  h.writeUInt32LE(sampleRate * blockAlign, 28);
  h.writeUInt16LE(blockAlign, 32);
  h.writeUInt16LE(bitsPerSample, 34);
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(size, 40);
  return h;
}

/** A complete WAV file around 16-bit mono PCM. Zero samples give exactly 44 bytes. */
export function wavFile(pcm: Buffer, sampleRate: number): Buffer {
  return Buffer.concat([wavHeader(pcm.length, sampleRate), pcm]);
}

export class WavFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WavFormatError';
  }
}

/**
 * Reads the header of a WAV file or of the first bytes of a WAV stream,
 * walking past chunks other than `fmt ` and `data` (LIST, fact...).
 * Returns null while more bytes are needed; throws on a non-WAV input.
 */
export function parseWavHeader(buf: Buffer): WavInfo | null {
  if (buf.length < 12) return null;
  if (buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') {
    throw new WavFormatError('not a RIFF/WAVE stream');
  }
  let format: WavFormat | null = null;
  let offset = 12;
  while (offset + 8 <= buf.length) {
    const id = buf.toString('ascii', offset, offset + 4);
    const size = buf.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'data') {
      if (!format) throw new WavFormatError('data chunk before fmt chunk');
      return { ...format, dataOffset: body, dataBytes: size };
    }
    if (id === 'fmt ') {
      if (body + 16 > buf.length) return null;
      format = {
        audioFormat: buf.readUInt16LE(body),
        channels: buf.readUInt16LE(body + 2),
        sampleRate: buf.readUInt32LE(body + 4),
        bitsPerSample: buf.readUInt16LE(body + 14),
      };
    }
    // Chunks are padded to an even length.
    offset = body + size + (size % 2);
  }
  return null;
}

/** Sample data of a whole WAV buffer, trusting the file length over a placeholder size. */
export function wavData(buf: Buffer): { info: WavInfo; data: Buffer } {
  const info = parseWavHeader(buf);
  if (!info) throw new WavFormatError('truncated WAV header');
  const end = Math.min(buf.length, info.dataOffset + info.dataBytes);
  return { info, data: buf.subarray(info.dataOffset, end) };
}
