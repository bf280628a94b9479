/**
 * Checks that a stored audio file is what it claims to be before it is
 * served again (a `POST /tts` cache hit, a download through `/files`): a
 * damaged file must never be handed out or charged for. Reads only the
 * first bytes and compares them with the stored size.
 */
import type { Readable } from 'node:stream';
import { CorruptBlobError, type Blobs } from '../../ports/blobs.ts';
import { parseWavHeader, STREAMING_DATA_BYTES } from './wav.ts';

export type StoredAudioState = 'ok' | 'missing' | 'corrupt';

/** Enough for a WAV header with a LIST chunk before `data`, an ID3 header or an Ogg page header. */
const HEAD_BYTES = 512;

/** True when `head` (the first bytes) and `size` fit the content type; raw PCM and mu-law have no structure to check. */
export function audioLooksIntact(contentType: string, head: Buffer, size: number): boolean {
  switch (contentType) {
    case 'audio/wav':
      return wavLooksIntact(head, size);
    case 'audio/mpeg':
      return size > 0 && (head.toString('latin1', 0, 3) === 'ID3' || (head[0] === 0xff && (head[1] & 0xe0) === 0xe0));
    case 'audio/ogg':
      return size > 0 && head.toString('latin1', 0, 4) === 'OggS';
    default:
      return true;
  }
}

function wavLooksIntact(head: Buffer, size: number): boolean {
  let info;
  try {
    info = parseWavHeader(head.subarray(0, Math.min(head.length, size)));
  } catch {
    return false;
  }
  if (!info || info.audioFormat !== 1 || info.bitsPerSample !== 16 || info.channels < 1 || info.channels > 2) return false;
  if (info.sampleRate < 8000 || info.sampleRate > 48000) return false;
  const frame = info.channels * 2;
  const stored = size - info.dataOffset;
  if (stored < 0 || stored % frame !== 0) return false;
  // Job audio declares its exact size; a saved stream declares the streaming placeholder.
  return info.dataBytes === stored || info.dataBytes === STREAMING_DATA_BYTES;
}

async function readHead(stream: Readable, bytes: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of stream) {
      parts.push(chunk as Buffer);
      length += (chunk as Buffer).length;
      if (length >= bytes) break;
    }
  } finally {
    stream.destroy();
  }
  return Buffer.concat(parts).subarray(0, bytes);
}

export async function inspectStoredAudio(blobs: Blobs, key: string): Promise<StoredAudioState> {
  let blob;
  try {
    blob = await blobs.open(key);
  } catch (err) {
    if (err instanceof CorruptBlobError) return 'corrupt';
    throw err;
  }
  if (!blob) return 'missing';
  const head = await readHead(blob.stream, HEAD_BYTES);
  return audioLooksIntact(blob.info.contentType, head, blob.info.size) ? 'ok' : 'corrupt';
}
