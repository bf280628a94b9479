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

/**
 * "1 000 000": one to three digits, then groups of exactly three after single
 * spaces (or no-break/narrow spaces), is one number, written again with dots
 * for the number rules. Not after a number and a space, not before one, and
 * never from a leading 0 (a phone number in groups is the phone rule's).
 * Runs on every text; its own quick test is the gate.
 */
const SPACED_GATE = /\d[ \u00a0\u202f]\d{3}/u;
const spacedThousandsRe = re(String.raw`(?<![\p{N}.,][ \u00a0\u202f]?|[\p{L}+])[1-9]\d{0,2}(?:[ \u00a0\u202f]\d{3}){1,4}(?![\p{N}]|[ \u00a0\u202f]\d|[.,]\d)`);
export const joinSpacedThousands: Rule = (text) =>
  !SPACED_GATE.test(text) ? text : text.replace(spacedThousandsRe, (m) => m.replace(/[ \u00a0\u202f]/gu, '.'));

/** 0 or +84, then groups of digits; a Vietnamese number has 9 or 10 digits after the prefix. */
const phoneRe = re(String.raw`(?<![\p{L}\p{N}+]|\p{N}[.,])(\+84[ .-]?|0)(\d{1,4}(?:[ .-]?\d{2,4}){1,3})(?!\p{N})`);
/** "(028) 3822 1234": a landline with its area code in parentheses. */
const landlineRe = re(String.raw`\((0\d{1,3})\)\s?(\d{3,4}[ .-]?\d{3,4})(?!\p{N})`);
/** "1900 1234", "1800-1234", "19001234": hotlines, said digit by digit like any phone number, never as a year or a cardinal. */
const hotlineRe = re(String.raw`(?<![\p{L}\p{N}+.,])(1[89]00)([ .-]?)(\d{4}|\d{2}[ .]\d{2}|\d{3}[ .]\d{3})(?![\p{N}]|[.,]\d)`);
/** "1800-1900" is a range of years, not a hotline. */
const yearLike = /^(?:1\d|20)\d{2}$/u;
export const readPhoneNumbers: Rule = (text) =>
  text
    .replace(landlineRe, (_m, area: string, rest: string) => `${readDigits(area)} ${readDigits(rest.replace(/\D/g, ''))}`)
    .replace(hotlineRe, (m, head: string, sep: string, rest: string) =>
      (sep === '-' && yearLike.test(rest) ? m : `${readDigits(head)} ${readDigits(rest.replace(/\D/g, ''))}`))
    .replace(phoneRe, (m, prefix: string, rest: string) => {
      const digits = rest.replace(/\D/g, '');
      if (digits.length < 8 || digits.length > 10) return m;
      return `${prefix.startsWith('+') ? 'cộng tám bốn' : 'không'} ${readDigits(digits)}`;
    });

const validDay = (d: number) => d >= 1 && d <= 31;
const validMonth = (m: number) => m >= 1 && m <= 12;
const precededBy = (text: string, offset: number, word: RegExp) => word.test(text.slice(Math.max(0, offset - 12), offset));

const fullDateRe = re(String.raw`(?<!\p{N})(\d{1,2})([/.-])(\d{1,2})\2(\d{4})(?!\p{N})`);
/** "2024-03-12", "2024/03/12": year first (ISO 8601). */
const isoDateRe = re(String.raw`(?<![\p{N}/.,-])(\d{4})([/-])(\d{1,2})\2(\d{1,2})(?![\p{N}]|[/.,-]\d)`);
/** d/m or d-m; whether it is a date is decided by the words before it (dayMonthReading). */
const dayMonthRe = re(String.raw`(?<![\p{N}/.,\-–])(\d{1,2})([/-])(\d{1,2})(?![\p{N}/]|[-–.,]\d)`);
const monthYearRe = re(String.raw`(?<![\p{N}/])(\d{1,2})/(\d{4})(?!\p{N})`);
const monthWordRe = re(String.raw`(?<=[tT]háng )(\d{1,2})(?![\p{N}/.,])`);

/**
 * Words after which d/m is always a date, matched case-insensitively as the
 * word(s) right before the number. DATE_DAY_WORDS already name the day
 * ("ngày 5/3", "dịp 30/4", "Ngày Nhà giáo 20/11"); the others gain "ngày".
 */
const DATE_DAY_WORDS = [
  'ngày', 'mùng', 'mồng', 'hôm', 'dịp', 'tết', 'lễ', 'nhà giáo', 'quốc khánh', 'giáng sinh', 'noel', 'valentine',
  'thiếu nhi', 'trung thu', 'giải phóng', 'thống nhất', 'quốc tế phụ nữ', 'quốc tế lao động',
];
const DATE_TIME_WORDS = ['hôm nay', 'hôm qua', 'ngày mai', 'sáng', 'trưa', 'chiều', 'tối', 'đêm'];
/** After these d/m is a date only when it cannot be a common fraction (day ≥ month: "từ 12/3") or starts a date range. */
const DATE_WEAK_WORDS = ['từ', 'đến', 'tới', 'trước', 'sau', 'đầu', 'cuối', 'vào', 'hạn'];
const wordsBefore = (words: string[]) => new RegExp(`(?:^|[^\\p{L}])(${alternation(words)})\\s$`, 'iu');
const dayWordBefore = wordsBefore(DATE_DAY_WORDS);
const timeWordBefore = wordsBefore(DATE_TIME_WORDS);
const weakWordBefore = wordsBefore(DATE_WEAK_WORDS);
/** What may stand between two dates of a list ("12/3, 13/3 và 14/3", "từ 12/3 đến 15/3"). */
const dateListGap = /^\s*(?:,|;|và|hoặc|đến|tới|[-–])?\s*$/u;
/** A d-m with a dash is a range, not a date, before these ("ngày 1-5 tháng 3", "sáng 8-10 giờ"). */
const rangeUnitAfter = /^\s*(?:tháng|\/|giờ|h(?!\p{L}))/iu;
/** A d/m right after, joined by a range word, that can only be a date ("từ 1/3 đến 15/3"). */
const dateRangeAfter = /^\s?(?:[-–]|đến|tới)\s?(\d{1,2})\/(\d{1,2})(?![\p{N}/])/u;
/** How far back the words deciding a reading are looked for: bounded, so every rule stays linear. */
const WINDOW = 28;

/** "2024-03-12": the year first (ISO 8601). */
const readIsoDates: Rule = (text) =>
  text.replace(isoDateRe, (m, y: string, _sep, mo: string, d: string, offset: number, all: string) => {
    if (!validDay(+d) || !validMonth(+mo)) return m;
    const lead = precededBy(all, offset, /ngày\s$/iu) ? '' : 'ngày ';
    return `${lead}${readCardinal(d)} tháng ${readMonth(+mo)} năm ${readCardinal(y)}`;
  });

/**
 * d/m after a date word, and the d/m that continue a list after a date; a
 * genuine fraction ("1/2 dân số", "đến 3/4 số phiếu") stays for readFractions.
 * d-m with a dash is a date only after a word that names the day ("ngày
 * 1-5", "ngày 30-4 và 2-9"): anywhere else it is a range.
 */
const readDayMonths: Rule = (text) => {
  let lastEnd = -1;
  let lastSep = '';
  let lastMonth = 0;
  return text.replace(dayMonthRe, (m, d: string, sep: string, mo: string, offset: number, all: string) => {
    if (!validDay(+d) || !validMonth(+mo)) return m;
    const before = all.slice(Math.max(0, offset - WINDOW), offset);
    const after = all.slice(offset + m.length, offset + m.length + WINDOW);
    const improper = +d >= +mo;
    const continues = lastEnd >= 0 && sep === lastSep && offset - lastEnd <= 10
      && dateListGap.test(all.slice(lastEnd, offset)) && (improper || +mo >= lastMonth);
    let lead: string | null = null;
    if (continues || dayWordBefore.test(before)) lead = '';
    else if (sep === '/' && timeWordBefore.test(before)) lead = 'ngày ';
    else if (sep === '/' && weakWordBefore.test(before)) {
      const range = dateRangeAfter.exec(after);
      if (improper || (range && validDay(+range[1]) && validMonth(+range[2]) && +range[1] >= +range[2])) lead = 'ngày ';
    }
    if (lead === null || (sep === '-' && rangeUnitAfter.test(after))) return m;
    lastEnd = offset + m.length;
    lastSep = sep;
    lastMonth = +mo;
    return `${lead}${readCardinal(d)} tháng ${readMonth(+mo)}`;
  });
};

/** What readDates needs: two numbers joined by "/", "." or "-", or a number after "tháng". */
export const DATE_GATE = /\d[/.-]\d|háng \d/u;

export const readDates: Rule = (text) =>
  readDayMonths(readIsoDates(text)
    .replace(fullDateRe, (m, d: string, _sep, mo: string, y: string, offset: number, all: string) => {
      if (!validDay(+d) || !validMonth(+mo)) return m;
      const lead = precededBy(all, offset, /ngày\s$/iu) ? '' : 'ngày ';
      return `${lead}${readCardinal(d)} tháng ${readMonth(+mo)} năm ${readCardinal(y)}`;
    }))
    .replace(monthYearRe, (m, mo: string, y: string, offset: number, all: string) => {
      if (!validMonth(+mo)) return m;
      const lead = precededBy(all, offset, /tháng\s$/iu) ? '' : 'tháng ';
      return `${lead}${readMonth(+mo)} năm ${readCardinal(y)}`;
    })
    .replace(monthWordRe, (m, mo: string) => (validMonth(+mo) ? readMonth(+mo) : m));

const clockRe = re(String.raw`(?<![\p{N}:])(\d{1,2}):(\d{2})(?::(\d{2}))?(?![\p{N}:]|[.,]\d)`);
const hourMarkRe = re(String.raw`${START}(\d{1,2})h(\d{2})?(p|ph|')?${END}`);
/** "1:10", "1:50.000": a colon between numbers; a ratio when the second is grouped or a ratio word comes before. */
const ratioRe = re(String.raw`(?<![\p{N}:.,])(\d{1,3}(?:[.,]\d{3})*):(\d{1,3}(?:[.,]\d{3})+|\d{1,6})(?![\p{N}:]|[.,]\d)`);
const ratioWordBefore = /(?:^|[^\p{L}])(?:tỷ lệ|tỉ lệ|pha loãng|pha)\s$/iu;
/** The dash between two clock times ("8h-17h", "19:30 - 21:00"): readRanges no longer sees digits on both sides once they are read. */
const timeRangeDashRe = re(String.raw`(?<=(?<![\p{L}\p{N}:])\d{1,2}(?:h(?:\d{2})?|:\d{2}(?::\d{2})?))\s?[-–]\s?(?=\d{1,2}(?:h|:\d{2}))`);

function readClock(h: string, m: string | undefined, s: string | undefined, minuteWord: boolean): string | null {
  if (+h > 24 || (m !== undefined && +m > 59) || (s !== undefined && +s > 59)) return null;
  const parts = [`${readCardinal(h)} giờ`];
  if (m !== undefined && (+m > 0 || s !== undefined)) parts.push(readCardinal(m) + (minuteWord ? ' phút' : ''));
  if (s !== undefined) parts.push(`${readCardinal(s)} giây`);
  return parts.join(' ');
}

export const readTimes: Rule = (text) =>
  text
    .replace(ratioRe, (m, a: string, b: string, offset: number, all: string) =>
      /[.,]/u.test(b) || ratioWordBefore.test(all.slice(Math.max(0, offset - WINDOW), offset))
        ? `${readNumberToken(a)} trên ${readNumberToken(b)}`
        : m)
    .replace(timeRangeDashRe, ' đến ')
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

/** A score after these words ("thắng 2-1", "tỷ số 2-1", "thắng Thái Lan 2-1") is read "hai – một", not as a range. */
const scoreWordBefore = /(?:^|[^\p{L}])(?:tỷ số|tỉ số|thắng|thua|hòa|hoà)\s$/iu;
/** Up to three capitalised words (a team's name) between the word and the score. */
const namesAtEnd = /(?<=\s)(?:\p{Lu}\p{L}*\s){1,3}$/u;
const scoreBefore = (before: string) => scoreWordBefore.test(before) || scoreWordBefore.test(before.replace(namesAtEnd, ''));
/** "thắng 3-5 trận" counts matches: a range. */
const countedAfter = /^\s?(?:trận|ván|lần|người|ghế|phiếu|giải|tuần|%)/iu;
const scoreRe = /(?<![\p{N}.,])(\d{1,2})\s?[-–]\s?(\d{1,2})(?![\p{N}]|[.,]\d)/gu;

/** "5-10" is a range; runs after dates and phone numbers have taken their dashes. */
export const readRanges: Rule = (text) =>
  text
    .replace(scoreRe, (m, a: string, b: string, offset: number, all: string) =>
      scoreBefore(all.slice(Math.max(0, offset - WINDOW), offset)) && !countedAfter.test(all.slice(offset + m.length, offset + m.length + 8))
        ? `${readCardinal(a)} – ${readCardinal(b)}` : m)
    .replace(/(?<=\d)\s?[-–]\s?(?=\d)/gu, ' đến ');

/** A minus sign (or an en dash) that starts a token is "âm" ("-5°C", "–5°C"). */
export const readNegatives: Rule = (text) => text.replace(/(?<=^|[\s(])[-−–](?=\d)/gmu, 'âm ');

/**
 * Signs read before numbers are read: "~50" is "khoảng năm mươi", "2 × 3"
 * "hai nhân ba"; ≥ ≤ ± ≈ ÷ are read wherever they stand. Runs on every text
 * (its own quick test is the gate).
 */
const SIGN_GATE = /[~×≥≤±≈÷]/u;
const SIGN_WORDS: Record<string, string> = {
  '≥': 'lớn hơn hoặc bằng', '≤': 'nhỏ hơn hoặc bằng', '±': 'cộng trừ', '≈': 'xấp xỉ', '÷': 'chia',
};
export const readSigns: Rule = (text) =>
  !SIGN_GATE.test(text)
    ? text
    : text
      .replace(/[≥≤±≈÷]/gu, (sign) => ` ${SIGN_WORDS[sign]} `)
      .replace(/(?<![\p{L}\p{N}~])~\s?(?=\d)/gu, 'khoảng ')
      .replace(/(?<=\d\s?)×(?=\s?\d)/gu, ' nhân ');

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

/** Units and time words a price or a rate is counted per ("đồng/kg", "lần/ngày"). */
const PER_WORDS: Record<string, string> = {
  ...UNITS, giây: 'giây', phút: 'phút', giờ: 'giờ', ngày: 'ngày', tuần: 'tuần', tháng: 'tháng', quý: 'quý', năm: 'năm',
  người: 'người', lượt: 'lượt', suất: 'suất', chiếc: 'chiếc', cái: 'cái', hộp: 'hộp', gói: 'gói', chai: 'chai', lít: 'lít', tấn: 'tấn',
};
/**
 * "25.000đ/kg", "3 lần/ngày", "5 triệu/tháng", "6%/năm": a slash between a counted word (right after an amount) and a
 * unit or time word is "mỗi", and the unit is read ("kg" was spelled letter by letter, the slash silent).
 * The amount is required: "ngày/tháng/năm sinh" and "và/hoặc" are left alone.
 */
const perUnitRe = re(`(?<=\\d\\s?(?:\\p{L}{1,8}|%))\\/(${alternation(Object.keys(PER_WORDS))})${END}`);
export const PER_UNIT_GATE = /[\p{L}%]\//u;
export const readPerUnit: Rule = (text) => text.replace(perUnitRe, (_m, unit: string) => ` mỗi ${PER_WORDS[unit]}`);

const percentRe = re(`(?<!\\p{N})${NUM}\\s?%`);
export const readPercentages: Rule = (text) =>
  text.replace(percentRe, (_m, num: string) => `${readNumberToken(num)} phần trăm`);

const unitRe = re(`(?<!\\p{N})${NUM}\\s?(${alternation(Object.keys(UNITS))})${END}`);
/** What readUnits needs: a digit, maybe a space, then a unit. */
export const UNIT_GATE = new RegExp(`\\d\\s?(?:${alternation(Object.keys(UNITS))})`, 'u');

/** "1m75": a height, metres then centimetres. */
const heightRe = re(String.raw`${START}(\d)m(\d{2})${END}`);
/** "1990s": a decade ("những năm một nghìn chín trăm chín mươi"), not seconds. */
const decadeRe = /^(?:1\d|20)\d0$/u;

export const readUnits: Rule = (text) =>
  text
    .replace(heightRe, (_m, metres: string, cm: string) => `${readCardinal(metres)} mét ${readCardinal(cm)}`)
    .replace(unitRe, (m, num: string, unit: string) =>
      unit === 's' && m.length === num.length + 1 && decadeRe.test(num)
        ? `những năm ${readCardinal(num)}`
        : `${readNumberToken(num)} ${UNITS[unit]}`);

/** "50k", "2tr": informal amounts without a currency. */
const scaleSuffixRe = re(`(?<!\\p{N})${NUM}(k|K|tr)${END}`);
export const readScaleSuffixes: Rule = (text) =>
  text.replace(scaleSuffixRe, (_m, num: string, s: string) => amount(num, s));

/** "thứ 2"; not "thứ 1.000", which the cardinal rule reads whole. */
const ordinalRe = re(String.raw`(?<=[tT]hứ )(\d{1,2})(?![\p{N}]|[.,]\d)`);
export const readOrdinals: Rule = (text) =>
  text.replace(ordinalRe, (_m, n: string) => readOrdinal(+n));

/** Words after which an upper-case Roman numeral is read, matched case-insensitively ("Thế Kỷ XX", "THẾ KỶ XXI"). */
const ROMAN_CONTEXTS = [
  'thế kỷ', 'thế kỉ', 'thế chiến', 'đại hội', 'khóa', 'khoá', 'chương', 'phần', 'quý', 'cấp', 'tập', 'mục',
  'giai đoạn', 'kỳ', 'kì', 'thứ',
];
const romanContextBefore = new RegExp(`(${alternation(ROMAN_CONTEXTS)}) $`, 'iu');
/** "thành phần X", "cổ phần A": "phần" is part of another word. */
const compoundPhanBefore = /(?:thành|cổ) phần $/iu;
/** The numeral, maybe with a year ("Quý III/2024"); the context word is checked in the 20 characters before it. */
const romanRe = re(String.raw`(?<=\p{L} )([IVXLCDM]{1,15})(?:\/(\d{4}))?${END}`);
/**
 * After "thứ" ("lần thứ XIII", "Thế chiến thứ II") a numeral is an ordinal
 * ("thứ tư") and must have two letters or more; a lone C, D, L or M is a
 * letter ("Phần C: Tự luận"), a lone I, V or X a numeral ("Phần I", "thế kỷ X").
 */
export const readRomanNumerals: Rule = (text) =>
  text.replace(romanRe, (m, roman: string, year: string | undefined, offset: number, all: string) => {
    const context = romanContextBefore.exec(all.slice(Math.max(0, offset - 20), offset));
    if (context === null || compoundPhanBefore.test(all.slice(Math.max(0, offset - 20), offset))) return m;
    const ordinal = context[1].toLowerCase() === 'thứ';
    if (roman.length === 1 && (ordinal || 'CDLM'.includes(roman))) return m;
    const n = parseRoman(roman);
    if (n === null) return m;
    const reading = ordinal ? readOrdinal(n) : readCardinal(String(n));
    return year === undefined ? reading : `${reading} năm ${readCardinal(year)}`;
  });

export const readFractions: Rule = (text) =>
  text.replace(/(?<![\p{N}/])(\d{1,4})\/(\d{1,4})(?![\p{N}/])/gu, (_m, a: string, b: string) =>
    +a < +b ? `${readCardinal(a)} phần ${+b === 4 ? 'tư' : readCardinal(b)}` : `${readCardinal(a)} trên ${readCardinal(b)}`);

const remainingNumberRe = re(`(?<!\\p{N})${NUM}(?![\\p{N}])`);
/** "ngày 05", "07 giờ", "phạt 01 năm": a two-digit number with a leading zero next to a date or time word is its value. */
const zeroPadWordBefore = /(?:^|[^\p{L}])(?:ngày|mùng|mồng|tháng)\s$/iu;
const zeroPadWordAfter = /^\s(?:giờ|phút|giây|năm|tháng|ngày)(?!\p{L})/iu;
/** A number glued to letters ("U23", "H5N1", "VTV1") is set apart from them by spaces once it is words. */
export const readRemainingNumbers: Rule = (text) =>
  text.replace(remainingNumberRe, (_m, num: string, offset: number, all: string) => {
    const end = offset + num.length;
    const padded = /^0\d$/u.test(num)
      && (zeroPadWordBefore.test(all.slice(Math.max(0, offset - 8), offset)) || zeroPadWordAfter.test(all.slice(end, end + 8)));
    const reading = padded ? readCardinal(num) : readNumberToken(num);
    const lead = offset > 0 && LETTER.test(pointBefore(all, offset)) ? ' ' : '';
    const tail = end < all.length && LETTER.test(pointAt(all, end)) ? ' ' : '';
    return lead + reading + tail;
  });

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
