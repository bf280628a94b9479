/**
 * Deterministic text preparation: runs on every synthesis, with or without
 * aiRefine. Pure and synchronous; linear in the length of the text on every
 * input (test/bench/text-prep.ts holds it to that), and run off the event
 * loop for long texts by prepare-pool.ts.
 */
import { applyCueTags } from './cues.ts';
import { chunkKinds, splitChunks, type SplitOptions } from './split.ts';
import { capCombiningRuns, stripZeroWidth, ZERO_WIDTH_GATE } from './unicode.ts';
import {
  expandAbbreviations, readCurrencies, readDates, readFractions, readLongNumberRuns, readNegatives, readOrdinals,
  readPercentages, readPhoneNumbers, readRanges, readRemainingNumbers, readRomanNumerals,
  readCodes, readPerUnit, readTeencode, readVersions, readArithmetic, readScaleSuffixes, readUnitRanges, readSigns, readSymbols, readTimes, readUnits, separateCodeHyphens, joinSpacedThousands, collapseWhitespace, trimEnds, type Rule,
  dropEmoji, dropEmoticons, readPlates,
  ABBREVIATION_GATE, ARITHMETIC_GATE, CODE_GATE, TEENCODE_GATE, VERSION_GATE, CURRENCY_GATE, DATE_GATE, PER_UNIT_GATE, UNIT_GATE, UNIT_RANGE_GATE,
  EMOJI_GATE, EMOTICON_GATE, PLATE_GATE,
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

/**
 * Each rule with what its text must contain for the rule to change anything
 * (null: it always runs). Most texts have no date, percent sign, clock time
 * or cue tag, and one scan for the gate costs less than a rule's replace
 * passes with their look-behinds. A gate is only ever a necessary condition:
 * test/unit/text-rule-gates.test.ts checks on generated texts that wherever
 * it says no, its rule would have changed nothing.
 * Order matters: see rules.ts for why each rule runs before the next.
 */
export const GATED_PIPELINE: ReadonlyArray<{ name: string; rule: Rule; gate: RegExp | null }> = [
  // Before the cap: a zero-width character between two runs of combining marks must not join them past it.
  { name: 'stripZeroWidth', rule: stripZeroWidth, gate: ZERO_WIDTH_GATE },
  { name: 'capCombiningRuns', rule: capCombiningRuns, gate: null },
  { name: 'NFC', rule: (t) => t.normalize('NFC'), gate: null },
  // Emoji and emoticons are not read (espeak said emoji by name); a blank takes their place.
  { name: 'dropEmoji', rule: dropEmoji, gate: EMOJI_GATE },
  { name: 'dropEmoticons', rule: dropEmoticons, gate: EMOTICON_GATE },
  { name: 'applyCueTags', rule: applyCueTags, gate: /\[/ },
  // A run longer than MAX_NUMBER_RUN (32) is 33 or more digits, dots and commas in a row.
  { name: 'readLongNumberRuns', rule: readLongNumberRuns, gate: /[0-9.,]{33}/ },
  { name: 'expandAbbreviations', rule: expandAbbreviations, gate: ABBREVIATION_GATE },
  // Lower-case chat words ("ko", "dc", "j"): whole words only, never after a number ("50 k").
  { name: 'readTeencode', rule: readTeencode, gate: TEENCODE_GATE },
  // Gate inside the rule: a digit, a space, three digits.
  { name: 'joinSpacedThousands', rule: joinSpacedThousands, gate: null },
  // Before the phone and number rules: a code after "mã", "OTP", "mật khẩu" is read digit by digit.
  { name: 'readCodes', rule: readCodes, gate: CODE_GATE },
  // Before the phone, decimal and range rules: "29A-123.45" is a licence plate.
  { name: 'readPlates', rule: readPlates, gate: PLATE_GATE },
  // Also the emergency numbers 111 to 115 ("gọi 113").
  { name: 'readPhoneNumbers', rule: readPhoneNumbers, gate: /0\d|\+84|11[1-5]/ },
  // Before the date and decimal rules: "17.4.1" is a version, "10 - 3 = 7" a subtraction, "6 : 2 = 3" no ratio.
  { name: 'readVersions', rule: readVersions, gate: VERSION_GATE },
  { name: 'readArithmetic', rule: readArithmetic, gate: ARITHMETIC_GATE },
  { name: 'readDates', rule: readDates, gate: DATE_GATE },
  // Also "10am", "8:30 AM" and the southern "7g30".
  { name: 'readTimes', rule: readTimes, gate: /\d[:hg]|\d\s?[aApP]\.?[mM]/ },
  { name: 'readRomanNumerals', rule: readRomanNumerals, gate: / [IVXLCDM]/ },
  { name: 'readOrdinals', rule: readOrdinals, gate: /[hH][\u1ee9\u1ee8] \d/ },
  // Before separateCodeHyphens, which would drop the dash of "5tr-7tr".
  { name: 'readUnitRanges', rule: readUnitRanges, gate: UNIT_RANGE_GATE },
  { name: 'separateCodeHyphens', rule: separateCodeHyphens, gate: /-/ },
  { name: 'readRanges', rule: readRanges, gate: /[-\u2013]/ },
  // Gate inside the rule: one of ~ × ≥ ≤ ± ≈ ÷.
  { name: 'readSigns', rule: readSigns, gate: null },
  { name: 'readNegatives', rule: readNegatives, gate: /[-\u2212\u2013]\d/ },
  { name: 'readPerUnit', rule: readPerUnit, gate: PER_UNIT_GATE },
  { name: 'readCurrencies', rule: readCurrencies, gate: CURRENCY_GATE },
  { name: 'readPercentages', rule: readPercentages, gate: /%/ },
  { name: 'readUnits', rule: readUnits, gate: UNIT_GATE },
  { name: 'readScaleSuffixes', rule: readScaleSuffixes, gate: /\d(?:[kK]|\s?tr)/ },
  { name: 'readFractions', rule: readFractions, gate: /\d\/\d/ },
  { name: 'readRemainingNumbers', rule: readRemainingNumbers, gate: /\d/ },
  { name: 'readSymbols', rule: readSymbols, gate: /[&%*_`~#|]/ },
  // Anything but lone spaces between words: other blanks, newlines, two spaces, a space before punctuation.
  { name: 'collapseWhitespace', rule: collapseWhitespace, gate: /[^\S ]| {2}| [.,!?;:\u2026]/u },
  { name: 'trimEnds', rule: trimEnds, gate: null },
];

/** Rewrites numbers, dates, units, abbreviations and tags into speakable Vietnamese. */
export function normalizeText(text: string): string {
  let out = text;
  for (const { rule, gate } of GATED_PIPELINE) if (gate === null || gate.test(out)) out = rule(out);
  return out;
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

/** The same checks as prepareText without cutting chunks: whether any chunk would be speakable, and any be words rather than a cue. */
export function checkText(text: string, options: Pick<PrepareOptions, 'sourceCharacters'> = {}): { speakable: boolean; spoken: boolean } {
  return chunkKinds(normalizeWithinLimit(text, options.sourceCharacters));
}
