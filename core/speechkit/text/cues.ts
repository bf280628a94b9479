/**
 * Inline cue tags. Engine v4 renders exactly three (SPEC "Emotion values");
 * every other bracket tag is deleted so that markup meant for other engines
 * is never read aloud.
 */

import { CUE_TAG_NAMES } from '../../../config/emotions.ts';

/** The tag names the engine renders (without brackets); the catalogue owns the list. */
export const CUE_TAGS = CUE_TAG_NAMES;
export type CueTag = (typeof CUE_TAGS)[number];

const BRACKET = /\[([^[\]]*)\]/g;

/** Longer than any cue name with generous spacing: such a bracket is not a cue, whatever it holds. */
const MAX_CUE_INNER = 40;

function canonicalCue(inner: string): CueTag | null {
  if (inner.length > MAX_CUE_INNER) return null;
  const key = inner.normalize('NFC').trim().replace(/\s+/g, ' ').toLowerCase();
  return (CUE_TAGS as readonly string[]).includes(key) ? (key as CueTag) : null;
}

/** Keeps known cue tags in canonical spelling (`[Cười ]` → `[cười]`) and deletes all other `[...]`. */
export function applyCueTags(text: string): string {
  return text.replace(BRACKET, (_m, inner: string) => {
    const cue = canonicalCue(inner);
    // Spaces around a kept tag make it its own token for the splitter.
    return cue ? ` [${cue}] ` : ' ';
  });
}

/** The cue a chunk of prepared text stands for when it is one canonical tag alone (`[cười]`), else null. */
export function cueOfChunk(chunk: string): CueTag | null {
  const m = /^\[(.+)\]$/u.exec(chunk);
  return m && (CUE_TAGS as readonly string[]).includes(m[1]) ? (m[1] as CueTag) : null;
}

/** Splits around canonical cue tags; the one capture group is the cue name. */
const CUE_SPLIT = /\[(cười|thở dài|hắng giọng)\]/u;

export type TextSegment = { kind: 'text'; text: string } | { kind: 'cue'; cue: CueTag };

/** Splits prepared text into spoken text and cue tags, in order; empty text is dropped. */
export function segmentCues(text: string): TextSegment[] {
  const out: TextSegment[] = [];
  const parts = text.split(CUE_SPLIT);
  parts.forEach((part, i) => {
    // split() with one capture group alternates text, cue, text, ...
    if (i % 2 === 1) out.push({ kind: 'cue', cue: part as CueTag });
    else if (part.trim()) out.push({ kind: 'text', text: part.trim() });
  });
  return out;
}
