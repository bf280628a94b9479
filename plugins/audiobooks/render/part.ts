import { Readable } from 'node:stream';
import type { Blobs } from '../../../core/ports/blobs.ts';
import type { SpeechEngine, VoiceProfile } from '../../../core/ports/engine.ts';
import { checkText, prepareText } from '../../../core/speechkit/text/prepare.ts';
import { silence } from '../../../core/speechkit/audio/pcm.ts';
import { linkedController } from '../../../core/speechkit/abort.ts';
import type { ScriptUnit } from '../script.ts';
import { trimSilence } from './trim.ts';

/** Parts are rendered, stored and mastered at the service's rate (SPEC: 48 kHz). */
export const BOOK_SAMPLE_RATE = 48_000;

/** Blob keys of a chapter's parts and of its finished file. */
export const partKey = (bookId: string, index: number, part: number) => `audiobooks/${bookId}/${index}/part-${part}.pcm`;
export const chapterKey = (bookId: string, index: number, format: 'mp3' | 'wav') => `audiobooks/${bookId}/${index}.${format}`;

export interface PartInput {
  units: ScriptUnit[];
  /** the voice reading a unit: the narrator for null, else the speaker's cast voice */
  voiceOf(speaker: string | null): VoiceProfile;
  signal?: AbortSignal;
}

/**
 * Whether text preparation leaves a speakable chunk: a unit that renders no speech (see `audibleGaps`), a
 * chapter that would be silence. Text it refuses for other reasons counts as speech, for the render to report.
 */
export const speaks = (text: string): boolean => {
  try {
    return checkText(text).speakable;
  } catch {
    return true;
  }
};

/** PCM of one part: each unit's silence, then its speech trimmed of the engine's own silences. */
async function* partPcm(engine: SpeechEngine, input: PartInput): AsyncGenerator<Buffer> {
  for (const unit of input.units) {
    if (unit.gapBefore > 0) yield silence(unit.gapBefore * 1000, BOOK_SAMPLE_RATE);
    const prepared = prepareText(unit.text);
    if (prepared.chunks.length === 0) continue;
    // One signal per unit: what the engine hangs on it goes away with the unit, not with the chapter.
    const unit$ = linkedController(input.signal);
    try {
      const speech = engine.synthesize({ text: prepared.text, voice: input.voiceOf(unit.speaker), speed: 1, sampleRate: BOOK_SAMPLE_RATE, signal: unit$.signal });
      yield* trimSilence((async function* () {
        for await (const chunk of speech) yield chunk.pcm;
      })());
    } finally {
      unit$.abort();
    }
  }
}

/** Renders a part into the blobs port as raw s16le PCM; resolves with its sample count. */
export async function renderPart(services: { engine: SpeechEngine; blobs: Blobs }, key: string, input: PartInput): Promise<number> {
  let bytes = 0;
  const counted = (async function* () {
    for await (const pcm of partPcm(services.engine, input)) {
      bytes += pcm.length;
      yield pcm;
    }
  })();
  await services.blobs.put(key, Readable.from(counted), 'application/octet-stream');
  return Math.floor(bytes / 2);
}
