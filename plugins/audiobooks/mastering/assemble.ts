import { Readable } from 'node:stream';
import type { Blobs } from '../../../core/ports/blobs.ts';
import { silence } from '../../../core/speechkit/audio/pcm.ts';
import { wavHeader } from '../../../core/speechkit/audio/wav.ts';
import type { PartRecord } from '../store/records.ts';
import { SILENCE } from '../script.ts';
import { BOOK_SAMPLE_RATE, partKey } from '../render/part.ts';
import type { MasterSource } from './master.ts';

/**
 * A rendered chapter as one PCM stream: 0.5 s of silence, its parts in
 * order (streamed from the blobs port one at a time), 3.5 s of silence.
 * Re-opened for every mastering pass.
 */
export function chapterSource(blobs: Blobs, bookId: string, index: number, parts: number): MasterSource {
  return {
    sampleRate: BOOK_SAMPLE_RATE,
    async *open() {
      yield silence(SILENCE.fileStart * 1000, BOOK_SAMPLE_RATE);
      for (let p = 0; p < parts; p++) {
        const blob = await blobs.open(partKey(bookId, index, p));
        if (!blob) throw new Error(`part ${p} of chapter ${index} is missing from storage`);
        yield* blob.stream as AsyncIterable<Buffer>;
      }
      yield silence(SILENCE.fileEnd * 1000, BOOK_SAMPLE_RATE);
    },
  };
}

/** The same chapter as a WAV file, without ffmpeg: what is delivered when mastering keeps failing. */
export function chapterWav(source: MasterSource, parts: Array<PartRecord | null>): Readable {
  const samples = Math.round((SILENCE.fileStart + SILENCE.fileEnd) * source.sampleRate) + parts.reduce((n, p) => n + (p?.samples ?? 0), 0);
  return Readable.from((async function* () {
    yield wavHeader(samples * 2, source.sampleRate);
    yield* source.open();
  })());
}
