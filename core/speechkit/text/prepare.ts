/**
 * Deterministic text preparation: runs on every synthesis, with or without
 * aiRefine. Pure and synchronous; linear in the length of the text on every
 * input (test/bench/text-prep.ts holds it to that), and run off the event
 * loop for long texts by prepare-pool.ts.
 */
import { applyCueTags } from './cues.ts';
import { hasSpeakableChunk, splitChunks, type SplitOptions } from './split.ts';
import { capCombiningRuns } from './unicode.ts';
import {
  expandAbbreviations, readCurrencies, readDates, readFractions, readLongNumberRuns, readNegatives, readOrdinals,
  readPercentages, readPhoneNumbers, readRanges, readRemainingNumbers, readRomanNumerals,
  readScaleSuffixes, readSymbols, readTimes, readUnits, separateCodeHyphens, tidyWhitespace, type Rule,
} from './rules.ts';

export interface PreparedText {
  /** the whole text, normalised for speech; cue tags kept as `[cười]` etc. */
  text: string;
  /** ordered, non-empty chunk boundaries for streaming */
  chunks: string[];
}

/**
 * The most characters the engine may read per billed character. Readings
 * are longer than what is written ("50%" is "năm mươi phần trăm", a phone
 * number is read digit by digit), dense figures reach about 7 times; a text
 * built to expand further (a row of "%" or "≤") is refused before billing.
 */
export const MAX_EXPANSION = 10;
/** Characters billed at least (SPEC billing rule 1); short texts may expand up to 10 times this. */
const EXPANSION_FLOOR_CHARS = 50;

export class TextExpansionError extends Error {
  constructor(readonly characters: number, readonly limit: number) {
    super(`the text reads as ${characters} characters, more than the ${limit} allowed`);
    this.name = 'TextExpansionError';
  }
}

/** The longest prepared text allowed for a source of `characters` characters. */
export function expansionLimit(characters: number): number {
  return MAX_EXPANSION * Math.max(EXPANSION_FLOOR_CHARS, characters);
}

/** Order matters: see rules.ts for why each rule runs before the next. */
const PIPELINE: Rule[] = [
  capCombiningRuns,
  (t) => t.normalize('NFC'),
  applyCueTags,
  readLongNumberRuns,
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

export interface PrepareOptions extends SplitOptions {
  /** characters of the text as submitted (before aiRefine); the expansion limit is measured against it */
  sourceCharacters?: number;
}

/** Normalises; throws TextExpansionError when the text would read far longer than it was written. */
function normalizeWithinLimit(text: string, sourceCharacters: number | undefined): string {
  const normalized = normalizeText(text);
  const limit = expansionLimit(sourceCharacters ?? text.length);
  if (normalized.length > limit) throw new TextExpansionError(normalized.length, limit);
  return normalized;
}

/** Prepares text for the engine; throws TextExpansionError when it would read far longer than it was written. */
export function prepareText(text: string, options: PrepareOptions = {}): PreparedText {
  const { sourceCharacters, ...split } = options;
  const normalized = normalizeWithinLimit(text, sourceCharacters);
  return { text: normalized, chunks: splitChunks(normalized, split) };
}

/** The same checks as prepareText without cutting chunks: whether any chunk would be speakable. */
export function checkText(text: string, options: Pick<PrepareOptions, 'sourceCharacters'> = {}): { speakable: boolean } {
  return { speakable: hasSpeakableChunk(normalizeWithinLimit(text, options.sourceCharacters)) };
}
