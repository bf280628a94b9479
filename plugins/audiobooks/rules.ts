import { createHash } from 'node:crypto';
import { DomainError } from '../../core/errors.ts';
import { countCharacters } from '../../core/billing/pricing.ts';
import type { CastEntry, SegmentRecord } from './store/records.ts';
import type { ScriptSegment } from './script.ts';

/** SPEC "Limits": audiobooks. */
export const LIMITS = {
  chapters: 200,
  chapterChars: 60_000,
  bookChars: 1_500_000,
  castVoices: 30,
} as const;

/** What is billed for a chapter: NFC characters of its title and of every segment. */
export function chapterCharacters(title: string, segments: Iterable<{ text: string }>): number {
  let n = countCharacters(title);
  for (const s of segments) n += countCharacters(s.text);
  return n;
}

/** Hash of a chapter's title and script: a new chapter identical to the last one is refused. */
export function contentHash(title: string, segments: Iterable<ScriptSegment>): string {
  const hash = createHash('sha256').update(JSON.stringify(title.normalize('NFC')));
  for (const s of segments) hash.update('\n' + JSON.stringify([s.speaker, s.text.normalize('NFC'), s.sceneBreak]));
  return hash.digest('hex');
}

const sameSegment = (a: ScriptSegment, b: ScriptSegment) =>
  a.speaker === b.speaker && a.text.normalize('NFC') === b.text.normalize('NFC') && a.sceneBreak === b.sceneBreak;

/** True when `incoming` repeats the chapter's last segments (`tail` are the chapter's last `incoming.length`). */
export function repeatsTail(tail: ScriptSegment[], incoming: ScriptSegment[]): boolean {
  return tail.length === incoming.length && tail.every((s, i) => sameSegment(s, incoming[i]!));
}

/** The last words of a segment, for the `segment_mismatch` answer. */
export function endingWords(text: string, words = 12): string {
  const all = text.trim().split(/\s+/u);
  return (all.length > words ? '… ' : '') + all.slice(-words).join(' ');
}

export function segmentMismatch(index: number, actual: number, sent: number, last: SegmentRecord | null): DomainError {
  const endsWith = last ? endingWords(last.text) : '';
  const ending = last ? ` It ends with "${endsWith}".` : ' It has no segments yet.';
  return new DomainError('conflict', `Chapter ${index} has ${actual} segments, not ${sent}.${ending} Send afterSegment ${actual} to append after them.`, {
    code: 'segment_mismatch', extra: { chapter: index, segments: actual, endsWith },
  });
}

export function duplicateSegments(index: number, count: number): DomainError {
  return new DomainError('conflict', `${count === 1 ? 'This segment is already the last segment' : `These ${count} segments are already the last segments`} of chapter ${index}; nothing was added. Send afterSegment to append ${count === 1 ? 'it' : 'them'} again on purpose.`, {
    code: 'duplicate_segments', extra: { chapter: index },
  });
}

export function duplicateChapter(index: number): DomainError {
  return new DomainError('conflict', `This chapter is identical to chapter ${index}, the book's last chapter; it was not added again.`, {
    code: 'duplicate_chapter', extra: { chapter: index },
  });
}

export function overPlanLimit(characters: number, chapterCharsMax: number): DomainError {
  return new DomainError('invalid', `The chapter has ${characters} characters; the longest chapter your plan can render is ${chapterCharsMax}. Split it into shorter chapters.`, {
    code: 'chapter_over_plan_limit', param: 'segments', extra: { chapterCharsMax, characters },
  });
}

export function checkBookLimits(input: { chapters: number; bookCharacters: number }): void {
  if (input.chapters > LIMITS.chapters) {
    throw new DomainError('invalid', `A book holds at most ${LIMITS.chapters} chapters.`, { code: 'too_many_chapters', extra: { chaptersMax: LIMITS.chapters } });
  }
  if (input.bookCharacters > LIMITS.bookChars) {
    throw new DomainError('invalid', `A book holds at most ${LIMITS.bookChars} characters; this chapter would bring it to ${input.bookCharacters}.`, {
      code: 'book_too_long', extra: { bookCharsMax: LIMITS.bookChars, characters: input.bookCharacters },
    });
  }
}

/**
 * The cast after adding `incoming`: new speakers join, a speaker already cast
 * keeps its voice (another voice for it is a conflict), at most 30 voices.
 */
export function mergeCast(current: CastEntry[], incoming: CastEntry[]): CastEntry[] {
  const merged = [...current];
  for (const entry of incoming) {
    const existing = merged.find((c) => c.speaker === entry.speaker);
    if (!existing) merged.push(entry);
    else if (existing.voiceId !== entry.voiceId) {
      throw new DomainError('conflict', `Speaker "${entry.speaker}" is already cast with voice ${existing.voiceId}.`, {
        code: 'cast_conflict', param: 'cast', extra: { speaker: entry.speaker, voiceId: existing.voiceId },
      });
    }
  }
  if (merged.length > LIMITS.castVoices) {
    throw new DomainError('invalid', `A book has at most ${LIMITS.castVoices} character voices.`, { code: 'too_many_voices', param: 'cast', extra: { castMax: LIMITS.castVoices } });
  }
  return merged;
}

export function checkSpeakers(cast: CastEntry[], segments: ScriptSegment[]): void {
  const known = new Set(cast.map((c) => c.speaker));
  const unknown = [...new Set(segments.map((s) => s.speaker).filter((s): s is string => s !== null && !known.has(s)))];
  if (unknown.length > 0) {
    throw new DomainError('invalid', `Speaker ${unknown.map((s) => `"${s}"`).join(', ')} is not in the book's cast; send it in cast with a voiceId.`, {
      code: 'unknown_speaker', param: 'segments', extra: { speakers: unknown },
    });
  }
}
