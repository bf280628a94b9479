/**
 * Unicode guards that keep normalisation linear. ICU reorders a run of
 * combining marks with an insertion sort, so NFC of one letter followed by
 * 50,000 marks of mixed classes takes seconds. UAX #15 ("Stream-Safe Text
 * Format") bounds a run at 30 non-starters; no real text comes near it.
 */

/** The longest run of combining marks accepted (UAX #15 stream-safe limit). */
export const MAX_COMBINING_RUN = 30;

// The lookbehind starts a match only where a run starts, so each run is looked at once.
const LONG_COMBINING_RUN = new RegExp(`(?<!\\p{M})\\p{M}{${MAX_COMBINING_RUN + 1}}`, 'u');
const COMBINING_RUN = /\p{M}+/gu;
const ANY_COMBINING = /\p{M}/u;

/** True when some run of combining marks is longer than the stream-safe limit. */
export function hasLongCombiningRun(text: string): boolean {
  // Composed (NFC) Vietnamese has no combining marks at all: one quick scan settles most texts.
  return ANY_COMBINING.test(text) && LONG_COMBINING_RUN.test(text);
}

/** Keeps the first 30 marks of every run and drops the rest: nothing a reader could say is lost. */
export function capCombiningRuns(text: string): string {
  if (!hasLongCombiningRun(text)) return text;
  return text.replace(COMBINING_RUN, (run) => (run.length > MAX_COMBINING_RUN ? run.slice(0, MAX_COMBINING_RUN) : run));
}

/** Zero-width characters (ZWSP, ZWNJ, ZWJ, word joiner, BOM) say nothing and split numbers ("10\u200b000"). */
export const ZERO_WIDTH_GATE = /[\u200b-\u200d\u2060\ufeff]/u;
export function stripZeroWidth(text: string): string {
  return text.replace(/[\u200b-\u200d\u2060\ufeff]+/gu, '');
}
