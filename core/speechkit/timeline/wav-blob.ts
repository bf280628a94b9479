/**
 * Stores a timeline as a WAV blob with bounded memory. A WAV header states
 * the data size, which is only known once the last clip is placed, so the
 * PCM streams into a scratch blob first; the WAV is then streamed from its
 * header and the scratch blob. An hour of subtitles never sits in memory.
 */
import { PassThrough, Readable } from 'node:stream';
import type { Blobs } from '../../ports/blobs.ts';
import { wavHeader } from '../audio/wav.ts';
import { abandonedWrite } from '../audio/back-pressure.ts';
import { TimelineWriter } from './writer.ts';

export interface StoredWav {
  key: string;
  samples: number;
  sampleRate: number;
  seconds: number;
}

async function* withHeader(header: Buffer, body: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  yield header;
  yield* body;
}

/** Runs `fill` on a fresh timeline and stores the result as `key` (audio/wav). */
export async function storeTimelineWav(
  blobs: Blobs, key: string, sampleRate: number, fill: (timeline: TimelineWriter) => Promise<void>,
): Promise<StoredWav> {
  const scratchKey = `${key}.pcm.part`;
  const pcm = new PassThrough();
  const stored = blobs.put(scratchKey, pcm, 'application/octet-stream');
  // A failed store surfaces through the writer (the stream closes); keep it from going unhandled meanwhile.
  stored.catch(() => undefined);
  const timeline = new TimelineWriter(pcm, sampleRate);
  try {
    await fill(timeline);
    pcm.end();
    await stored;
    const scratch = await blobs.open(scratchKey);
    if (!scratch) throw new Error(`scratch audio ${scratchKey} vanished before the WAV was written`);
    await blobs.put(key, Readable.from(withHeader(wavHeader(timeline.samples * 2, sampleRate), scratch.stream)), 'audio/wav');
  } catch (err) {
    throw await abandonedWrite(pcm, stored, err);
  } finally {
    await blobs.delete(scratchKey).catch(() => undefined);
  }
  return { key, samples: timeline.samples, sampleRate, seconds: timeline.seconds };
}
