/**
 * The `POST /tts/stream` wire format: a 4-byte big-endian length, then that
 * many bytes of audio, repeated; a zero length ends a complete stream. Each
 * frame is encoded on its own so a client can decode (and play) frames
 * separately: WAV frames are whole WAV files, MP3 and Opus frames whole
 * small files, PCM and mu-law frames raw samples.
 */
import { encodeBuffer, encodeMulaw, wavFile, type AudioFormat } from '../../core/speechkit/audio/index.ts';

export const LENGTH_BYTES = 4;
/** The zero-length frame that marks a complete stream. */
export const TERMINATOR = Buffer.alloc(LENGTH_BYTES);

export type StreamFormatName = 'len32-wav-chunks' | 'len32-frames';

export function streamFormatName(format: AudioFormat): StreamFormatName {
  return format === 'wav' ? 'len32-wav-chunks' : 'len32-frames';
}

export function lengthPrefix(length: number): Buffer {
  const prefix = Buffer.allocUnsafe(LENGTH_BYTES);
  prefix.writeUInt32BE(length, 0);
  return prefix;
}

/** A heartbeat: a valid 44-byte WAV with zero samples, framed. Clients skip it. */
export function heartbeatFrame(sampleRate: number): Buffer {
  const wav = wavFile(Buffer.alloc(0), sampleRate);
  return Buffer.concat([lengthPrefix(wav.length), wav]);
}

/** Turns one piece of s16le PCM (already at the output rate) into one self-contained frame body. */
export function frameEncoder(format: AudioFormat, sampleRate: number): (pcm: Buffer) => Promise<Buffer> {
  switch (format) {
    case 'wav':
      return async (pcm) => wavFile(pcm, sampleRate);
    case 'pcm':
      return async (pcm) => pcm;
    case 'ulaw':
      return async (pcm) => encodeMulaw(pcm);
    default:
      // One encoder run per frame: every MP3 or Ogg frame is a complete file.
      return (pcm) => encodeBuffer(pcm, { format, inputRate: sampleRate, outputRate: sampleRate });
  }
}

/**
 * Shortest audio per frame. Frames follow the engine's chunks (a sentence
 * or clause), but engines that stream over a network yield small pieces;
 * MP3 and Opus pay an encoder start and codec padding per frame, so those
 * are gathered into longer frames. The first frame is never held back.
 */
export function minFrameSeconds(format: AudioFormat): number {
  return format === 'mp3' || format === 'opus' ? 1 : 0.1;
}

/** Gathers PCM pieces into frames of at least `minBytes`, except the first and the last. */
export async function* gatherFrames(pcm: AsyncIterable<Buffer>, minBytes: number): AsyncGenerator<Buffer> {
  let first = true;
  let parts: Buffer[] = [];
  let size = 0;
  for await (const piece of pcm) {
    parts.push(piece);
    size += piece.length;
    if (first || size >= minBytes) {
      yield parts.length === 1 ? parts[0] : Buffer.concat(parts, size);
      first = false;
      parts = [];
      size = 0;
    }
  }
  if (size > 0) yield Buffer.concat(parts, size);
}
