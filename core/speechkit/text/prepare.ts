/**
 * Deterministic text preparation: runs on every synthesis, with or without
 * aiRefine. Pure and synchronous so that the API process can prepare text
 * (and fail fast) before any engine is involved.
 */
import { applyCueTags } from './cues.ts';
import { splitChunks, type SplitOptions } from './split.ts';
import {
  expandAbbreviations, readCurrencies, readDates, readFractions, readNegatives, readOrdinals,
  readPercentages, readPhoneNumbers, readRanges, readRemainingNumbers, readRomanNumerals,
  readScaleSuffixes, readSymbols, readTimes, readUnits, separateCodeHyphens, tidyWhitespace, type Rule,
} from './rules.ts';

export interface PreparedText {
  /** the whole text, normalised for speech; cue tags kept as `[cười]` etc. */
  text: string;
  /** ordered, non-empty chunk boundaries for streaming */
  chunks: string[];
}

/** Order matters: see rules.ts for why each rule runs before the next. */
const PIPELINE: Rule[] = [
  (t) => t.normalize('NFC'),
  applyCueTags,
  expandAbbreviations,
  readPhoneNumbers,
  readDates,
  readTimes,
  readRomanNumerals,
  readOrdinals,
  separateCodeHyphens,
  readRanges,
  readNegatives,
  readCurrencies,
  readPercentages,
  readUnits,
  readScaleSuffixes,
  readFractions,
  readRemainingNumbers,
  readSymbols,
  tidyWhitespace,
];

/** Rewrites numbers, dates, units, abbreviations and tags into speakable Vietnamese. */
export function normalizeText(text: string): string {
  return PIPELINE.reduce((acc, rule) => rule(acc), text);
}

export function prepareText(text: string, options: SplitOptions = {}): PreparedText {
  const normalized = normalizeText(text);
  return { text: normalized, chunks: splitChunks(normalized, options) };
}
