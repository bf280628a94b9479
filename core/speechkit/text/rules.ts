/**
 * The rewrite rules of deterministic text preparation, in the order they
 * must run: each rule consumes digits and symbols that a later, more general
 * rule would otherwise read the wrong way (a phone number must be spoken
 * digit by digit before the cardinal rule sees it; a date's slashes must go
 * before the fraction rule).
 */
import {
  NUMBER_PATTERN, parseRoman, readCardinal, readDigits, readMonth, readNumberToken, readOrdinal,
} from './numbers.ts';
import {
  ABBREVIATIONS, CURRENCY_AFTER, CURRENCY_BEFORE, SCALE_SUFFIXES, UNITS, alternation,
} from './lexicon.ts';

export type Rule = (text: string) => string;

/*
 * Linear time on any input: a pattern that can start at every position of a
 * run must be anchored to the run's start (a lookbehind), and every number
 * pattern below sees runs of at most MAX_NUMBER_RUN characters because
 * readLongNumberRuns has already turned longer ones into words. Each rule
 * replaces a bounded match with a bounded reading, so no rule can blow the
 * text up by more than a constant factor (prepare.ts checks the total).
 */

/** Not preceded / followed by a letter or digit (JS \b is ASCII-only and misses Vietnamese letters). */
const START = String.raw`(?<![\p{L}\p{N}])`;
const END = String.raw`(?![\p{L}\p{N}])`;
const NUM = `(${NUMBER_PATTERN})`;

const re = (source: string) => new RegExp(source, 'gu');

/** The longest run of digits with `.`/`,` separators still read as one number ("1.000.000.000,25"). */
export const MAX_NUMBER_RUN = 32;
/** Digits said in one breath when a long code is read out. */
const DIGIT_GROUP = 4;
const numberRunRe = /\d+(?:[.,]\d+)*/gu;

function readDigitGroups(run: string): string {
  const groups: string[] = [];
  for (const part of run.split(/[.,]/u)) {
    for (let i = 0; i < part.length; i += DIGIT_GROUP) groups.push(readDigits(part.slice(i, i + DIGIT_GROUP)));
  }
  return groups.join(', ');
}

/**
 * A run of digits longer than any number (a pasted code, a row of digits) is
 * read digit by digit in groups of four with a pause between groups, before
 * any other number rule sees it.
 */
export const readLongNumberRuns: Rule = (text) =>
  text.replace(numberRunRe, (run) => (run.length > MAX_NUMBER_RUN ? readDigitGroups(run) : run));

const abbreviationRe = re(`${START}(${alternation(Object.keys(ABBREVIATIONS))})${END}`);
const districtRe = re(`${START}Q\\.\\s?(?=\\d)`);
const wardRe = re(`${START}P\\.\\s?(?=\\d)`);
/**
 * What a text must hold for expandAbbreviations to change it: the first two
 * characters of some abbreviation, or "Q."/"P." before a number. Most
 * sentences hold none, and this scan is cheaper than the rule's look-behinds.
 */
export const ABBREVIATION_GATE = new RegExp(
  alternation([...new Set([...Object.keys(ABBREVIATIONS), 'Q.', 'P.'].map((key) => key.slice(0, 2)))]), 'u');

export const expandAbbreviations: Rule = (text) =>
  text
    .replace(abbreviationRe, (m) => ABBREVIATIONS[m] ?? m)
    .replace(districtRe, 'quận ')
    .replace(wardRe, 'phường ');

/** 0 or +84, then groups of digits; a Vietnamese number has 9 or 10 digits after the prefix. */
const phoneRe = re(String.raw`(?<![\p{L}\p{N}+])(\+84[ .-]?|0)(\d{1,4}(?:[ .-]?\d{2,4}){1,3})(?!\p{N})`);
export const readPhoneNumbers: Rule = (text) =>
  text.replace(phoneRe, (m, prefix: string, rest: string) => {
    const digits = rest.replace(/\D/g, '');
    if (digits.length < 8 || digits.length > 10) return m;
    return `${prefix.startsWith('+') ? 'cộng tám bốn' : 'không'} ${readDigits(digits)}`;
  });

const validDay = (d: number) => d >= 1 && d <= 31;
const validMonth = (m: number) => m >= 1 && m <= 12;
const precededBy = (text: string, offset: number, word: RegExp) => word.test(text.slice(Math.max(0, offset - 12), offset));

const fullDateRe = re(String.raw`(?<!\p{N})(\d{1,2})([/.-])(\d{1,2})\2(\d{4})(?!\p{N})`);
const dayMonthRe = re(String.raw`(?<=(ngày|mùng|hôm|sáng|trưa|chiều|tối|đêm|Ngày|Mùng|Hôm|Sáng|Trưa|Chiều|Tối|Đêm) )(\d{1,2})/(\d{1,2})(?![\p{N}/])`);
const monthYearRe = re(String.raw`(?<![\p{N}/])(\d{1,2})/(\d{4})(?!\p{N})`);
const monthWordRe = re(String.raw`(?<=[tT]háng )(\d{1,2})(?![\p{N}/.,])`);

/** What readDates needs: two numbers joined by "/", "." or "-", or a number after "tháng". */
export const DATE_GATE = /\d[/.-]\d|háng \d/u;

export const readDates: Rule = (text) =>
  text
    .replace(fullDateRe, (m, d: string, _sep, mo: string, y: string, offset: number, all: string) => {
      if (!validDay(+d) || !validMonth(+mo)) return m;
      const lead = precededBy(all, offset, /ngày\s$/iu) ? '' : 'ngày ';
      return `${lead}${readCardinal(d)} tháng ${readMonth(+mo)} năm ${readCardinal(y)}`;
    })
    .replace(dayMonthRe, (m, word: string, d: string, mo: string) => {
      if (!validDay(+d) || !validMonth(+mo)) return m;
      const lead = /^(ngày|mùng)$/iu.test(word) ? '' : 'ngày ';
      return `${lead}${readCardinal(d)} tháng ${readMonth(+mo)}`;
    })
    .replace(monthYearRe, (m, mo: string, y: string, offset: number, all: string) => {
      if (!validMonth(+mo)) return m;
      const lead = precededBy(all, offset, /tháng\s$/iu) ? '' : 'tháng ';
      return `${lead}${readMonth(+mo)} năm ${readCardinal(y)}`;
    })
    .replace(monthWordRe, (m, mo: string) => (validMonth(+mo) ? readMonth(+mo) : m));

const clockRe = re(String.raw`(?<![\p{N}:])(\d{1,2}):(\d{2})(?::(\d{2}))?(?![\p{N}:])`);
const hourMarkRe = re(String.raw`${START}(\d{1,2})h(\d{2})?(p|ph|')?${END}`);

function readClock(h: string, m: string | undefined, s: string | undefined, minuteWord: boolean): string | null {
  if (+h > 24 || (m !== undefined && +m > 59) || (s !== undefined && +s > 59)) return null;
  const parts = [`${readCardinal(h)} giờ`];
  if (m !== undefined && (+m > 0 || s !== undefined)) parts.push(readCardinal(m) + (minuteWord ? ' phút' : ''));
  if (s !== undefined) parts.push(`${readCardinal(s)} giây`);
  return parts.join(' ');
}

export const readTimes: Rule = (text) =>
  text
    .replace(clockRe, (m, h: string, mi: string, s: string | undefined) => readClock(h, mi, s, true) ?? m)
    .replace(hourMarkRe, (m, h: string, mi: string | undefined, suffix: string | undefined) =>
      readClock(h, mi, undefined, suffix !== undefined) ?? m);

const isAsciiDigit = (code: number) => code >= 0x30 && code <= 0x39;
const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff;
const LETTER = /^\p{L}$/u;
/** The code point before `i` (a letter outside the BMP is two UTF-16 units). */
const pointBefore = (text: string, i: number) =>
  String.fromCodePoint(text.codePointAt(i >= 2 && isLow(text.charCodeAt(i - 1)) && isHigh(text.charCodeAt(i - 2)) ? i - 2 : i - 1)!);
const pointAt = (text: string, i: number) => String.fromCodePoint(text.codePointAt(i)!);

/**
 * "COVID-19", "F-16": the hyphen joins a name to a number and is not read.
 * A scan from hyphen to hyphen: the look-behind pattern it replaces
 * (letter-hyphen-digit or digit-hyphen-letter) was tried at every position.
 */
export const separateCodeHyphens: Rule = (text) => {
  let out = '';
  let from = 0;
  for (let i = text.indexOf('-'); i !== -1; i = text.indexOf('-', i + 1)) {
    if (i === 0 || i === text.length - 1) continue;
    const before = text.charCodeAt(i - 1);
    const after = text.charCodeAt(i + 1);
    const joins = (isAsciiDigit(after) && !isAsciiDigit(before) && LETTER.test(pointBefore(text, i)))
      || (isAsciiDigit(before) && LETTER.test(pointAt(text, i + 1)));
    if (!joins) continue;
    out += text.slice(from, i) + ' ';
    from = i + 1;
  }
  return from === 0 ? text : out + text.slice(from);
};

/** "5-10" is a range; runs after dates and phone numbers have taken their dashes. */
export const readRanges: Rule = (text) => text.replace(/(?<=\d)\s?[-–]\s?(?=\d)/gu, ' đến ');

/** A minus sign that starts a token is "âm" ("-5°C"). */
export const readNegatives: Rule = (text) => text.replace(/(?<=^|[\s(])[-−](?=\d)/gmu, 'âm ');

const scaleAlt = alternation(Object.keys(SCALE_SUFFIXES));
const currencyBeforeRe = re(`(${alternation(Object.keys(CURRENCY_BEFORE))})\\s?${NUM}(?:\\s?(${scaleAlt})${END})?`);
const currencyAfterRe = re(`(?<!\\p{N})${NUM}(?:\\s?(${scaleAlt}))?\\s?(${alternation(Object.keys(CURRENCY_AFTER))})(?![\\p{L}\\p{N}])`);

function amount(num: string, scale: string | undefined): string {
  return scale ? `${readNumberToken(num)} ${SCALE_SUFFIXES[scale]}` : readNumberToken(num);
}

/** What readCurrencies needs: a symbol before a digit, or a digit, maybe a scale, then a currency. */
export const CURRENCY_GATE = new RegExp(
  `(?:${alternation(Object.keys(CURRENCY_BEFORE))})\\s?\\d|\\d(?:\\s?(?:${scaleAlt}))?\\s?(?:${alternation(Object.keys(CURRENCY_AFTER))})`, 'u');

export const readCurrencies: Rule = (text) =>
  text
    .replace(currencyBeforeRe, (_m, sym: string, num: string, scale: string | undefined) =>
      `${amount(num, scale)} ${CURRENCY_BEFORE[sym]}`)
    .replace(currencyAfterRe, (_m, num: string, scale: string | undefined, cur: string) =>
      `${amount(num, scale)} ${CURRENCY_AFTER[cur]}`);

const percentRe = re(`(?<!\\p{N})${NUM}\\s?%`);
export const readPercentages: Rule = (text) =>
  text.replace(percentRe, (_m, num: string) => `${readNumberToken(num)} phần trăm`);

const unitRe = re(`(?<!\\p{N})${NUM}\\s?(${alternation(Object.keys(UNITS))})${END}`);
/** What readUnits needs: a digit, maybe a space, then a unit. */
export const UNIT_GATE = new RegExp(`\\d\\s?(?:${alternation(Object.keys(UNITS))})`, 'u');

export const readUnits: Rule = (text) =>
  text.replace(unitRe, (_m, num: string, unit: string) => `${readNumberToken(num)} ${UNITS[unit]}`);

/** "50k", "2tr": informal amounts without a currency. */
const scaleSuffixRe = re(`(?<!\\p{N})${NUM}(k|K|tr)${END}`);
export const readScaleSuffixes: Rule = (text) =>
  text.replace(scaleSuffixRe, (_m, num: string, s: string) => amount(num, s));

const ordinalRe = re(String.raw`(?<=[tT]hứ )(\d{1,2})(?!\p{N})`);
export const readOrdinals: Rule = (text) =>
  text.replace(ordinalRe, (_m, n: string) => readOrdinal(+n));

const romanContextRe = re(String.raw`((?:[tT]hế kỷ|[tT]hế kỉ|[tT]hế chiến|[đĐ]ại hội|[kK]hóa|[kK]hoá|[cC]hương|[pP]hần) )([IVXLCDM]+)${END}`);
export const readRomanNumerals: Rule = (text) =>
  text.replace(romanContextRe, (m, lead: string, roman: string) => {
    const n = parseRoman(roman);
    return n === null ? m : lead + readCardinal(String(n));
  });

export const readFractions: Rule = (text) =>
  text.replace(/(?<![\p{N}/])(\d{1,4})\/(\d{1,4})(?![\p{N}/])/gu, (_m, a: string, b: string) =>
    `${readCardinal(a)} ${+a < +b ? 'phần' : 'trên'} ${readCardinal(b)}`);

const remainingNumberRe = re(`(?<!\\p{N})${NUM}(?![\\p{N}])`);
export const readRemainingNumbers: Rule = (text) =>
  text.replace(remainingNumberRe, (_m, num: string) => readNumberToken(num));

/** Symbols a reader says aloud, and markdown emphasis that must not be read. */
export const readSymbols: Rule = (text) =>
  text
    .replace(/(?<!\s)\s*&\s*/gu, ' và ')
    .replace(/%/gu, ' phần trăm')
    .replace(/[*_`~#|]+/gu, ' ');

/** One space between words, one newline between lines, none before punctuation; the ends are trimmed after it. */
export const collapseWhitespace: Rule = (text) =>
  text
    .replace(/\r\n?/g, '\n')
    .replace(/[^\S\n]+/gu, ' ')
    .replace(/ ?\n ?/g, '\n')
    .replace(/\n{2,}/g, '\n')
    .replace(/ (?=[.,!?;:…])/gu, '');

export const trimEnds: Rule = (text) => text.trim();
