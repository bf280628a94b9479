import { DomainError } from '../../errors.ts';
import type { AuthContext } from '../../http/auth.ts';

/**
 * SPEC: a test key (`vn_test_`) caps each request at 100 words. The count is
 * the same whatever separates the words:
 * - a word is a run of letters, marks and digits; digits joined by `.` or
 *   `,` are one number ("50.000", "3,5"); every other character (comma,
 *   dot, dash, slash, tab, NBSP, ideographic or zero-width space, …) ends a word;
 * - a run in a script written without spaces (Chinese, Japanese, Thai, …)
 *   is split by Unicode word segmentation (UAX #29 with dictionaries, as
 *   Intl.Segmenter does it);
 * - a text counts at least as many words as it has whitespace-separated
 *   tokens, SPEC's own wording ("- - -" is three).
 */
export const TEST_KEY_MAX_WORDS = 100;

const RUN = /\p{N}+(?:[.,]\p{N}+)*|[\p{L}\p{M}\p{N}]+/gu;
/** Runs that need a dictionary to find their words: anything beyond Latin letters (Vietnamese included), digits and marks. */
const NEEDS_SEGMENTATION = /[^\p{Script=Latin}\p{N}\p{M}]/u;
/** V8's segmenter slows down quadratically with the length it walks: long runs go through it in windows. */
const WINDOW = 256;
const segmenter = new Intl.Segmenter('vi', { granularity: 'word' });

function segmentedWords(run: string): number {
  let words = 0;
  for (let start = 0; start < run.length; ) {
    let end = Math.min(run.length, start + WINDOW);
    const code = run.charCodeAt(end - 1);
    if (code >= 0xd800 && code <= 0xdbff) end++; // never split a surrogate pair
    for (const segment of segmenter.segment(run.slice(start, end))) if (segment.isWordLike) words++;
    start = end;
  }
  return words;
}

/** Words as defined above, counted up to just past `stopAfter`: the count only has to show the cap is exceeded. */
export function countWords(text: string, stopAfter = Infinity): number {
  let words = 0;
  for (const [run] of text.matchAll(RUN)) {
    words += NEEDS_SEGMENTATION.test(run) ? Math.max(1, segmentedWords(run)) : 1;
    if (words > stopAfter) return words;
  }
  let tokens = 0;
  for (const _ of text.matchAll(/\S+/gu)) if (++tokens > stopAfter) break;
  return Math.max(words, tokens);
}

export function enforceTestKeyWordCap(auth: AuthContext | null, text: string, param = 'text'): void {
  if (auth?.keyKind !== 'test') return;
  if (countWords(text, TEST_KEY_MAX_WORDS) > TEST_KEY_MAX_WORDS) {
    throw new DomainError('invalid', `Test keys are limited to ${TEST_KEY_MAX_WORDS} words per request; this text has more. Use a live key (vn_sk_) for longer text.`, {
      code: 'TEST_KEY_WORD_LIMIT',
      param,
    });
  }
}
