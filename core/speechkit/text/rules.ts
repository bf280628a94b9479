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

/**
 * Emoji are decoration, not words: espeak-ng read them by their CLDR name ("😀" as "mặt cười toe toét"). A run of
 * pictographs, skin tones, flags (regional indicators) and tag characters becomes a space, so emoji between two
 * sentences or glued to a word part them like a blank; the variation selectors and the keycap mark are dropped in
 * place ("1️⃣" is "1"). "©", "®", "™", "‼", "⁉" are text symbols and stay. A star after a rating is "sao" ("5⭐").
 */
const EMOJI_CLASS = String.raw`★☆\p{Extended_Pictographic}\p{Emoji_Modifier}\p{Regional_Indicator}\u{E0020}-\u{E007F}\uFE0E\uFE0F\u20E3`;
const emojiRunRe = re(`(?:(?![©®‼⁉™])[${EMOJI_CLASS}])+`);
const SELECTORS_ONLY = /^[\uFE0E\uFE0F\u20E3]+$/u;
const starRatingRe = re(String.raw`(?<![\p{N}.,])(\d{1,2}(?:[.,]\d)?)\s?(?:⭐|★|🌟)\uFE0F?`);
/** What dropEmoji needs: one of the characters it drops (wider: "©" passes). */
export const EMOJI_GATE = new RegExp(`[${EMOJI_CLASS}]`, 'u');
export const dropEmoji: Rule = (text) =>
  text
    .replace(starRatingRe, '$1 sao')
    .replace(emojiRunRe, (run) => (SELECTORS_ONLY.test(run) ? '' : ' '));

/**
 * Emoticons standing alone as a token (":)", ":((", ":D", ";)", "=))", ":v", "^^", "^_^", "-_-", "T_T", "<3", "xD",
 * "@@") are not read: left, their colons were dropped as punctuation and "<3" read "ba". Only between blanks (or
 * before punctuation): "8:30", "1:2", "x<3" and a score are untouched, and neither "<3" nor ":3" after a number or
 * a lone letter ("x <3", "2 :3" compare).
 */
const EMOTICON = String.raw`[:;]['’]?-?(?:\)+|\(+|D+|[pP])|:['’]?-?[v3*oO|/<>]|=(?:\)+|\(+|D|P)|\^[_.-]?\^+|<\/?3+|[-T>oO]_[-T<oO]|-\.-|xD+|@@`;
/** A run of emoticons (":):)"): the look-ahead and back-reference match it atomically, so a long run is tried once. */
const emoticonRe = re(String.raw`(?<!\S)(?=((?:${EMOTICON})+))\1(?=$|\s|[.,!?;…])`);
/** What dropEmoticons needs: an emoticon after a blank or at the start (no end check). */
export const EMOTICON_GATE = new RegExp(String.raw`(?<!\S)(?:${EMOTICON})`, 'u');
const comparedBefore = /(?:^|[^\p{L}\p{N}])(?:\p{L}|\p{N}+)\s$/u;
export const dropEmoticons: Rule = (text) =>
  text.replace(emoticonRe, (m, _run: string, offset: number, all: string) =>
    (/\d$/u.test(m) && precededBy(all, offset, comparedBefore, 20) ? m : ' '));

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

/** "…/2019/NĐ-CP": an issuer code right after a document's year is read by readDates ("của Chính phủ"), not here. */
const afterDocumentYear = (code: string, offset: number, all: string): boolean => {
  if (!(code in DOCUMENT_ISSUERS)) return false;
  const number = /(?<![\p{N}/.,])\d{1,4}\/(?:19|20)\d{2}\/$/u.exec(all.slice(Math.max(0, offset - 10), offset));
  return number !== null && precededBy(all, offset - number[0].length, documentWordBefore, WINDOW);
};

export const expandAbbreviations: Rule = (text) =>
  text
    .replace(abbreviationRe, (m: string, _code: string, offset: number, all: string) => (afterDocumentYear(m, offset, all) ? m : ABBREVIATIONS[m] ?? m))
    .replace(districtRe, 'quận ')
    .replace(wardRe, 'phường ');

/**
 * Teencode: "ko", "k", "hok", "khum" are "không", "dc"/"đc" "được", "j" "gì", "r" "rồi", "ng" "người", "vs" "với",
 * "mn"/"mng" "mọi người" (espeak spelled them letter by letter). Whole words in lower case only ("K", "Ng." are
 * initials), never after a number ("50 k" is an amount), next to a sign or inside a code or an address ("r = 5",
 * "k-pop", "a/k/a", "đc:" is "địa chỉ"); "vs" only before a lower-case word ("Việt Nam vs Thái Lan" is versus);
 * "j" not after "i," (indices). "kh" is also "khách hàng" ("kh đặt hàng"): "không" only before "?" ("đi kh?"), before
 * a word that follows "không" in chat ("kh biết", "kh sao", "kh có") or at a clause's end after "hay", "được", "có"
 * ("đi hay kh."). "bn" is "bạn" or "bao nhiêu": "bao nhiêu" before "tiền", "tuổi", "người", "lâu", "lần" and after
 * "giá", "hết", "mất" at a clause's end; "bạn" after "các" and before "ơi"; anywhere else it is left.
 */
const TEENCODE: Record<string, string> = {
  k: 'không', ko: 'không', hok: 'không', khum: 'không', dc: 'được', 'đc': 'được', j: 'gì', r: 'rồi', ng: 'người',
  vs: 'với', mn: 'mọi người', mng: 'mọi người', kh: 'không', bn: 'bao nhiêu',
};
const AFTER_KHONG = [
  'biết', 'có', 'sao', 'được', 'dc', 'đc', 'phải', 'cần', 'muốn', 'thể', 'ai', 'hiểu', 'nên', 'thích', 'thấy', 'chịu',
  'còn', 'đâu', 'nha', 'nhé', 'hề', 'nhớ', 'kịp', 'dám', 'đủ', 'sợ', 'ạ', 'rảnh', 'tin', 'ngờ', 'ổn', 'đúng', 'bao giờ',
];
const khongAfter = new RegExp(`^(?:\\s?\\?|\\s(?:${alternation(AFTER_KHONG)})(?!\\p{L}))`, 'u');
const clauseEndAfter = /^\s?(?:$|[.,;!?…)])/u;
const khongWordBefore = /(?:^|[^\p{L}])(?:hay|được|đc|dc|có)\s$/u;
const howMuchAfter = /^\s(?:tiền|tuổi|người|lâu|lần)(?!\p{L})/u;
const priceWordBefore = /(?:^|[^\p{L}])(?:giá|hết|mất)\s$/u;
const friendAround = (all: string, offset: number, end: number) =>
  precededBy(all, offset, /(?:^|[^\p{L}])các\s$/u, 5) || followedBy(all, end, /^\sơi(?!\p{L})/u, 5);
const teencodeRe = re(String.raw`(?<![\p{L}\p{N}@/_'’&=<>+*^.-]|\p{N}\s|[=<>+*^/-]\s)(${alternation(Object.keys(TEENCODE))})(?![\p{L}\p{N}@/_'’&-]|\s?[=<>+*^(]|\.\p{L}|:)`);
/** What readTeencode needs: one of its words after a non-letter (a gate, wider than the rule). */
export const TEENCODE_GATE = new RegExp(String.raw`(?<![\p{L}\p{N}])(?:${alternation(Object.keys(TEENCODE))})(?![\p{L}\p{N}])`, 'u');
const lowerWordAfter = /^\s\p{Ll}/u;
const indexBefore = /(?:^|[^\p{L}])i\s?,\s?$/u;
export const readTeencode: Rule = (text) =>
  text.replace(teencodeRe, (m, word: string, offset: number, all: string) => {
    if (word === 'vs' && !followedBy(all, offset + m.length, lowerWordAfter, 2)) return m;
    if (word === 'j' && precededBy(all, offset, indexBefore, 4)) return m;
    const end = offset + m.length;
    if (word === 'kh') {
      const khong = followedBy(all, end, khongAfter, 12)
        || (followedBy(all, end, clauseEndAfter, 3) && precededBy(all, offset, khongWordBefore, 5));
      return khong ? TEENCODE[word] : m;
    }
    if (word === 'bn') {
      if (followedBy(all, end, howMuchAfter, 7) || (followedBy(all, end, clauseEndAfter, 3) && precededBy(all, offset, priceWordBefore, 5))) return TEENCODE[word];
      return friendAround(all, offset, end) ? 'bạn' : m;
    }
    return TEENCODE[word];
  });

/**
 * "Mã OTP: 482915", "mật khẩu 123456", "Nhập mã 5678": a one-time code, PIN or password of 4 to 8 digits is typed
 * back by the listener, so it is read digit by digit. "PIN" in capitals only ("pin 5000 mAh" is a battery), and
 * never before a unit; "số 5678" (a house number) stays a cardinal. "o tê pê", "pê i nờ": as aiRefine spells them.
 */
const CODE_NAMES = ['OTP', 'PIN', 'o tê pê', 'pê i nờ'];
const CODE_WORDS = ['mã', 'mã số', 'mã xác nhận', 'mã xác thực', 'mật khẩu', 'o tê pê', 'pê i nờ', ...CODE_NAMES.map((w) => `mã ${w}`)]
  .flatMap((w) => [w, w[0].toUpperCase() + w.slice(1), w.toUpperCase()]);
const codeRe = re(String.raw`${START}(${alternation([...new Set([...CODE_WORDS, 'OTP', 'PIN'])])})((?: của bạn)?(?:\s?:\s?|\s(?:là\s)?))(\d{4,8})(?![\p{L}\p{N}]|[.,]\d)`);
const unitAfter = new RegExp(`^\\s?(?:${alternation(Object.keys(UNITS))})(?![\\p{L}\\p{N}])`, 'u');
/**
 * "mã đơn hàng 123456789", "Mã vận đơn: SPX0123456789", "hộ chiếu số C1234567", "số hợp đồng 12345": an order,
 * waybill, transaction, invoice, contract or passport number is a code too, 4 to 20 digits, maybe with capital
 * letters before or after ("DH12345", "VN123456789VN"): the digits are read one by one, the letters left to be
 * spelled. Not with a slash or a dot inside ("số hợp đồng 01/2024/HĐ" is the date rule's).
 */
const LONG_CODE_WORDS = [
  'mã đơn', 'mã đơn hàng', 'mã vận đơn', 'số vận đơn', 'mã giao dịch', 'mã hóa đơn', 'mã hoá đơn', 'số hóa đơn', 'số hoá đơn',
  'mã khách hàng', 'mã tra cứu', 'mã hợp đồng', 'số hợp đồng', 'hợp đồng số', 'hộ chiếu số', 'số hộ chiếu', 'mã bưu kiện',
].flatMap((w) => [w, w[0].toUpperCase() + w.slice(1), w.toUpperCase()]);
const longCodeRe = re(String.raw`${START}(${alternation(LONG_CODE_WORDS)})((?:\s?:\s?|\s(?:là\s)?)#?)([A-Z]{0,4})(\d{4,20})([A-Z]{0,4})(?![\p{L}\p{N}]|[.,/\-]\w)`);
/** A gate wider than the rule (any case): cheap, and never says no where the rule would read a code. */
export const CODE_GATE = /ã|otp|pin|khẩu|tê pê|pê i nờ|vận đơn|hợp đồng|hộ chiếu|hóa đơn|hoá đơn/iu;
export const readCodes: Rule = (text) =>
  text
    .replace(longCodeRe, (m, word: string, gap: string, head: string, digits: string, tail: string, offset: number, all: string) =>
      (followedBy(all, offset + m.length, unitAfter, 8) ? m
        : `${word}${gap.replace('#', '')}${head ? `${head} ` : ''}${readDigits(digits)}${tail ? ` ${tail}` : ''}`))
    .replace(codeRe, (m, word: string, gap: string, digits: string, offset: number, all: string) =>
      (followedBy(all, offset + m.length, unitAfter, 8) ? m : `${word}${gap}${readDigits(digits)}`));

/**
 * Vietnamese licence plates, "29A-123.45", "51F-678.90", "30E-12345", "29B1-123.45", "80LD-1234": a province code
 * (two digits, 11 to 99), a series of one or two capitals maybe with a digit, a hyphen, then 4 or 5 digits (a dot
 * after the third). Read as traffic news reads them: the province code as a number, the series as written (its
 * digit said), a pause, then the serial digit by digit ("hai mươi chín A, một hai ba bốn năm"), never a decimal
 * ("một trăm hai mươi ba phẩy bốn mươi lăm") or a range ("A1-123" was "A một đến một trăm …").
 */
const plateRe = re(String.raw`(?<![\p{L}\p{N}.,/\-–])([1-9]\d)([A-Z]{1,2})(\d?)-(\d{3}\.\d{2}|\d{4,5})(?![\p{L}\p{N}]|[.,\-–]\d)`);
export const PLATE_GATE = /\d[A-Z]{1,2}\d?-\d/u;
export const readPlates: Rule = (text) =>
  text.replace(plateRe, (m, province: string, series: string, seriesDigit: string, serial: string) =>
    (+province < 11 ? m : `${readCardinal(province)} ${series}${seriesDigit ? ` ${readDigits(seriesDigit)}` : ''}, ${readDigits(serial)}`));

/**
 * "1 000 000": one to three digits, then groups of exactly three after single
 * spaces (or no-break/narrow spaces), is one number, written again with dots
 * for the number rules. Not after a number and a space, not before one, and
 * never from a leading 0 (a phone number in groups is the phone rule's).
 * Runs on every text; its own quick test is the gate.
 */
const SPACED_GATE = /\d[ \u00a0\u202f]\d{3}/u;
const spacedThousandsRe = re(String.raw`(?<![\p{N}.,][ \u00a0\u202f]?|[\p{L}+])[1-9]\d{0,2}(?:[ \u00a0\u202f]\d{3}){1,4}(?![\p{N}]|[ \u00a0\u202f]\d|[.,]\d)`);
/**
 * Only when it cannot be a row of numbers ("phòng 101 102 103", "tháng 3 100 người", "quận 1 300 căn hộ"):
 * every group after the first is 000 ("25 000", "1 000 000"), or a currency follows ("1 234 567 đồng").
 */
const currencyAfterSpaced = new RegExp(`^\\s?(?:${alternation([...Object.keys(CURRENCY_AFTER), 'đồng', 'đô la', 'euro'])})(?![\\p{L}\\p{N}])`, 'u');
export const joinSpacedThousands: Rule = (text) =>
  !SPACED_GATE.test(text)
    ? text
    : text.replace(spacedThousandsRe, (m, offset: number, all: string) =>
      /^\d+(?:[ \u00a0\u202f]000)+$/u.test(m) || followedBy(all, offset + m.length, currencyAfterSpaced, 6)
        ? m.replace(/[ \u00a0\u202f]/gu, '.')
        : m);

/** 0 or +84, then groups of digits; a Vietnamese number has 9 or 10 digits after the prefix. */
const phoneRe = re(String.raw`(?<![\p{L}\p{N}+]|\p{N}[.,])(\(\+84\)\s?|\+84[ .-]?|0)(\d{1,4}(?:[ .-]?\d{2,4}){1,3})(?!\p{N})`);
/** "(+84) 912 345 678": the country code in parentheses, said like "+84". */
/** "(028) 3822 1234": a landline with its area code in parentheses. */
const landlineRe = re(String.raw`\((0\d{1,3})\)\s?(\d{3,4}[ .-]?\d{3,4})(?!\p{N})`);
/** "1900 1234", "1800-1234", "19001234": hotlines, said digit by digit like any phone number, never as a year or a cardinal. */
const hotlineRe = re(String.raw`(?<![\p{L}\p{N}+.,])(1[89]00)([ .-]?)(\d{2}[ .]\d{2}[ .]\d{2}|\d{3}[ .]\d{3}|\d{6}|\d{4}|\d{2}[ .]\d{2})(?![\p{N}]|[.,]\d)`);
/**
 * "gọi 113", "Tổng đài 113, 114, 115": the emergency numbers 111 to 115 after a word that dials them are said digit
 * by digit ("một một ba"). Not after a bare "số" ("nhà số 113" is a house number).
 */
const EMERGENCY_WORDS = [
  'gọi', 'gọi số', 'gọi ngay', 'gọi ngay số', 'gọi đến', 'gọi đến số', 'gọi tới', 'gọi tới số', 'quay số', 'bấm số',
  'tổng đài', 'tổng đài số', 'đường dây', 'đường dây nóng', 'hotline', 'số khẩn cấp',
];
const emergencyWordBefore = new RegExp(`(?:^|[^\\p{L}])(?:${alternation(EMERGENCY_WORDS)})\\s?:?\\s$`, 'iu');
const emergencyRe = re(String.raw`(?<![\p{N}.,])11[1-5](?:(?:\s?,\s?|\s(?:và|hoặc)\s)11[1-5]){0,4}(?![\p{N}]|[.,]\d)`);
/** "1800-1900" is a range of years, not a hotline. */
const yearLike = /^(?:1\d|20)\d{2}$/u;
export const readPhoneNumbers: Rule = (text) =>
  text
    .replace(emergencyRe, (list: string, offset: number, all: string) =>
      (precededBy(all, offset, emergencyWordBefore, 24) ? list.replace(/11[1-5]/gu, (n) => readDigits(n)) : list))
    .replace(landlineRe, (_m, area: string, rest: string) => `${readDigits(area)} ${readDigits(rest.replace(/\D/g, ''))}`)
    .replace(hotlineRe, (m, head: string, sep: string, rest: string) =>
      (sep === '-' && yearLike.test(rest) ? m : `${readDigits(head)} ${readDigits(rest.replace(/\D/g, ''))}`))
    .replace(phoneRe, (m, prefix: string, rest: string) => {
      const digits = rest.replace(/\D/g, '');
      if (digits.length < 8 || digits.length > 10) return m;
      return `${prefix.includes('+') ? 'cộng tám bốn' : 'không'} ${readDigits(digits)}`;
    });

/**
 * "iOS 17.4.1", "v1.2.3", "mục 2.3.1", "192.168.1.1": three or four parts joined by dots are read joined by "chấm"
 * ("phẩy" and a silent dot before). Not dotted thousands ("1.000.000": every later part three digits) and never
 * inside a longer chain; a full date ("2.9.1945") has a four-digit year and is not matched.
 */
const versionRe = re(String.raw`(?<![\p{N}.,])\d{1,3}(?:\.\d{1,3}){2,3}(?![\p{N}]|[.,]\d)`);
export const VERSION_GATE = /\d\.\d{1,3}\.\d/u;
export const readVersions: Rule = (text) =>
  text.replace(versionRe, (m, offset: number, all: string) => {
    const parts = m.split('.');
    if (parts.slice(1).every((p) => p.length === 3)) return m;
    const lead = offset > 0 && LETTER.test(pointBefore(all, offset)) ? ' ' : '';
    return lead + parts.map((p) => readNumberToken(p)).join(' chấm ');
  });

/**
 * Arithmetic before "=": "10 - 3 = 7" is "mười trừ ba bằng bảy" (not a range), "6 : 2 = 3" "sáu chia hai", "5 x 4"
 * "năm nhân bốn"; and "x" between two numbers is "nhân" anywhere ("5x20m", "1920x1080"), never from a lone 0
 * ("0x1F" is hexadecimal) or after a letter ("H5x2"). The expression starts a run of numbers (the look-behind), so
 * each is tried once; "+" and "=" are left to readSigns.
 */
const OPERATORS: Record<string, string> = { '-': 'trừ', '–': 'trừ', ':': 'chia', x: 'nhân', '×': 'nhân', '+': '+' };
const equationRe = re(String.raw`(?<![\p{L}\p{N}.,:/\-–+×]|[\-–+×:x]\s)(?:${NUMBER_PATTERN})(?:\s?[-–:x×+]\s?(?:${NUMBER_PATTERN})){1,4}(?=\s?=\s?\d)`);
const timesRe = re(String.raw`(?<![\p{L}\p{N}.,:/×])(${NUMBER_PATTERN})((?:\s?[x×]\s?(?:${NUMBER_PATTERN})){1,4})(?![\p{N}]|[.,]\d)`);
const operatorRe = /(?<=\d)\s?([-–:x×+])\s?(?=\d)/gu;
export const ARITHMETIC_GATE = /\d\s?[x×]\s?\d|\d\s?=/u;
export const readArithmetic: Rule = (text) =>
  text
    .replace(equationRe, (m) => m.replace(operatorRe, (_o, op: string) => ` ${OPERATORS[op]} `))
    .replace(timesRe, (m, first: string) => (first === '0' ? m : m.replace(operatorRe, (o, op: string) => (op === 'x' || op === '×' ? ' nhân ' : o))));

const validDay = (d: number) => d >= 1 && d <= 31;
const validMonth = (m: number) => m >= 1 && m <= 12;
/** Whether the `chars` characters before `offset` (after `end`) match: the bounded look around each context rule makes. */
const precededBy = (text: string, offset: number, word: RegExp, chars = 12) => word.test(text.slice(Math.max(0, offset - chars), offset));
const followedBy = (text: string, end: number, word: RegExp, chars: number) => word.test(text.slice(end, end + chars));
/**
 * The end of the text, one of `punctuation`, or one of `words`: what follows a date or a score, as opposed
 * to the counted noun that follows a fraction or a range ("2/3 số công nhân", "2-3 lần").
 */
const endOrFollowedBy = (punctuation: string, words: string[]) =>
  new RegExp(`^(?:\\s*$|\\s*[${punctuation}]|\\s+(?:${alternation(words)})(?!\\p{L}))`, 'iu');

const fullDateRe = re(String.raw`(?<!\p{N})(\d{1,2})([/.-])(\d{1,2})\2(\d{4})(?!\p{N})`);
/** "2024-03-12", "2024/03/12": year first (ISO 8601). */
const isoDateRe = re(String.raw`(?<![\p{N}/.,-])((?:19|20)\d{2})([/-])(\d{2})\2(\d{2})(?![\p{N}]|[/.,-]\d)`);
/** d/m or d-m; whether it is a date is decided by the words before it (dayMonthReading). */
const dayMonthRe = re(String.raw`(?<![\p{N}/.,\-–])(\d{1,2})([/-])(\d{1,2})(?![\p{N}/]|[-–.,]\d)`);
const monthYearRe = re(String.raw`(?<![\p{N}/])(\d{1,2})/(\d{4})(?!\p{N})`);
const monthWordRe = re(String.raw`(?<=[tT]háng )(\d{1,2})(?![\p{N}/.,])`);

/**
 * Words right before a d/m (matched case-insensitively) that make it a date.
 * The day words name the day themselves ("ngày 5/3", "mùng 1/1"); after a
 * holiday or a time word ("dịp 30/4", "hôm nay 2/9", which gains "ngày") the
 * d/m must also be followed by what follows a date (DATE_FOLLOWERS), so
 * "hôm qua 1/3 số chuyến bay" stays a fraction.
 */
const DAY_WORDS = ['ngày', 'mùng', 'mồng', 'hôm'];
const HOLIDAY_WORDS = [
  'dịp', 'tết', 'lễ', 'nhà giáo', 'quốc khánh', 'giáng sinh', 'noel', 'valentine', 'thiếu nhi', 'trung thu',
  'quốc tế phụ nữ', 'quốc tế lao động',
];
/** "sáng nay", "tối qua", "phiên (giao dịch)": a news lede's time words; "Sáng nay (15/6)" may put a parenthesis between. */
const TIME_WORDS = [
  'hôm nay', 'hôm qua', 'ngày mai', 'sáng', 'trưa', 'chiều', 'tối', 'đêm',
  ...['sáng', 'trưa', 'chiều', 'tối', 'đêm'].flatMap((w) => [`${w} nay`, `${w} qua`, `${w} mai`]), 'phiên', 'phiên giao dịch',
];
/** Streets, parks and events named after a date ("đường 3/2", "Công viên 23/9", "Kỷ niệm 30/4"): dates when followed as one. */
const PLACE_WORDS = ['đường', 'phố', 'công viên', 'quảng trường', 'kỷ niệm', 'kỉ niệm', 'chiến thắng', 'sự kiện'];
const wordsBefore = (words: string[], gap = '\\s') => new RegExp(`(?:^|[^\\p{L}])(${alternation(words)})${gap}$`, 'iu');
const dayWordBefore = wordsBefore(DAY_WORDS);
const holidayWordBefore = wordsBefore([...HOLIDAY_WORDS, ...PLACE_WORDS]);
/** A place's name goes on ("Chiến thắng 30/4 lịch sử"): after one, a day past its month is a date whatever follows. */
const placeWordBefore = wordsBefore(PLACE_WORDS);
const timeWordBefore = wordsBefore(TIME_WORDS, '\\s\\(?');
/** "từ" before a date range ("từ 12/3 đến 15/3"): a date only when the range's ends can only be dates. */
const rangeStartBefore = wordsBefore(['từ']);
/** "kể từ 1/7", "có hiệu lực từ 1/7": since a day, a date whenever it is followed as one. */
const sinceWordBefore = wordsBefore(['kể từ', 'tính từ', 'bắt đầu từ', 'hiệu lực từ', 'áp dụng từ']);
/**
 * After a plain "từ", only what closes a starting point ("từ 1/7.", "từ 1/7 đến nay", "từ 27/4 đến hết 1/5"):
 * "giảm từ 1/2 xuống 1/3" and "từ 1/3 đến 1/2" keep their fractions.
 */
const fromDateFollows = /^(?:\s*$|\s*[.,;:!?)\]"”'’…]|\s+(?:(?:đến|tới) (?:nay|hết)|trở đi|tới\s*(?:$|[.,;:!?])))(?!\p{L})/iu;
/** "(tức 7/5 âm lịch)": a day of the lunar calendar, "mùng" for the first ten days. */
const lunarAfter = /^\s(?:âm lịch|ÂL)(?!\p{L})/iu;
/**
 * What follows a date (the end, punctuation, a joining or a verb-like word),
 * as opposed to what follows a fraction or a count ("2/3 số công nhân",
 * "2-3 lần"): the test for every date not named by a day word.
 */
const DATE_FOLLOWERS = [
  'và', 'hoặc', 'đến', 'tới', 'là', 'năm', 'này', 'nay', 'vừa', 'hàng', 'của', 'ở', 'tại', 'sẽ', 'đã', 'có', 'thì',
  'lúc', 'vào', 'theo', 'trong', 'sau', 'trước', 'khi', 'mới', 'được', 'bị', 'với', 'cho', 'nhưng', 'rồi',
];
const dateFollows = endOrFollowedBy(`.,;:!?)\\]"”'’…–-`, DATE_FOLLOWERS);
/** What may stand between two dates of a list ("12/3, 13/3 và 14/3", "từ 12/3 đến 15/3", "27/4 đến hết 1/5"). */
const dateListGap = /^\s*(?:,|;|và|hoặc|(?:đến|tới)(?: hết)?|[-–])?\s*$/u;
/** The end of a range ("đến 15/3", "- 1/5") is a date whatever follows it; a list's next item must be followed as a date. */
const dateRangeGap = /^\s*(?:(?:đến|tới)(?: hết)?|[-–])\s*$/u;
/** A d-m with a dash is a range, not a date, before these ("ngày 1-5 tháng 3", "sáng 8-10 giờ"). */
const rangeUnitAfter = /^\s*(?:tháng|\/|giờ|h(?!\p{L}))/iu;
/** A d/m right after, joined by a range word ("từ 1/3 đến 15/3"). */
const dateRangeAfter = /^\s?(?:[-–]|(?:đến|tới)(?: hết)?)\s?(\d{1,2})\/(\d{1,2})(?![\p{N}/])/u;
/** How far back the words deciding a reading are looked for: bounded, so every rule stays linear. */
const WINDOW = 28;

/** A whole date, "ngày" added unless it is already there; null when no calendar has it. */
function readFullDate(d: string, mo: string, y: string, offset: number, all: string): string | null {
  if (!validDay(+d) || !validMonth(+mo)) return null;
  const lead = precededBy(all, offset, /ngày\s$/iu) ? '' : 'ngày ';
  return `${lead}${readCardinal(d)} tháng ${readMonth(+mo)} năm ${readCardinal(y)}`;
}

/** "2024-03-12": the year first (ISO 8601). */
const readIsoDates: Rule = (text) =>
  text.replace(isoDateRe, (m, y: string, _sep, mo: string, d: string, offset: number, all: string) => readFullDate(d, mo, y, offset, all) ?? m);

/**
 * d/m after a day word ("ngày 12/3"); after a holiday, a place named after a
 * date or a time word ("Sáng nay (15/6)"), after "kể từ" ("kể từ 1/7,"), and
 * the d/m that continue a list after a date ("12/3, 13/3 và 14/3"), each only
 * when followed as a date is; after "từ" when the range's ends can only be
 * dates ("từ 12/3 đến 15/3") or when what follows closes a starting point
 * ("có hiệu lực từ 1/7."); before "âm lịch"; and "30/4-1/5", a range that
 * starts with a day past its month. A genuine fraction ("1/2 dân số", "ngày
 * 12/3, 2/3 số công nhân", "giảm từ 1/2 xuống 1/3") stays for readFractions.
 * d-m with a dash is a date only after a day word, a holiday or a place,
 * followed as a date ("ngày 30-4 và 2-9", "lễ 2-9."): "ngày 2-3 lần", "mùng
 * 1-2 Tết" are ranges.
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
    const followed = dateFollows.test(after);
    const gap = lastEnd >= 0 && offset - lastEnd <= 10 ? all.slice(lastEnd, offset) : null;
    const continues = gap !== null && sep === lastSep && dateListGap.test(gap) && (improper || +mo >= lastMonth)
      && (followed || dateRangeGap.test(gap));
    const range = dateRangeAfter.exec(after);
    const rangeOfDates = range !== null && validDay(+range[1]) && validMonth(+range[2]);
    let lead: string | null = null;
    if (continues) lead = '';
    else if (sep === '-') {
      lead = (dayWordBefore.test(before) || holidayWordBefore.test(before)) && followed && !rangeUnitAfter.test(after) ? '' : null;
    } else if (dayWordBefore.test(before)) lead = '';
    else if (lunarAfter.test(after)) lead = +d <= 10 ? 'mùng ' : 'ngày ';
    else if (holidayWordBefore.test(before) && (followed || (+d > +mo && placeWordBefore.test(before)))) lead = '';
    else if (timeWordBefore.test(before) && followed) lead = 'ngày ';
    else if (sinceWordBefore.test(before) && followed) lead = 'ngày ';
    else if (rangeStartBefore.test(before)) {
      if ((rangeOfDates && (improper || +range[1] >= +range[2])) || fromDateFollows.test(after)) lead = 'ngày ';
    } else if (rangeOfDates && improper && +range[2] >= +mo) lead = '';
    if (lead === null) return m;
    lastEnd = offset + m.length;
    lastSep = sep;
    lastMonth = +mo;
    return `${lead}${readCardinal(d)} tháng ${readMonth(+mo)}`;
  });
};

/** What readDates needs: two numbers joined by "/", "." or "-", or a number after "tháng". */
export const DATE_GATE = /\d[/.-]\d|háng \d/u;

/**
 * "Nghị định 100/2019/NĐ-CP", "Thông tư số 01/2024": a document's number and year ("một trăm năm hai nghìn không
 * trăm mười chín"), then its code, read as the rules read it; never a month, a fraction or silent slashes.
 */
const DOCUMENT_WORDS = ['nghị định', 'thông tư', 'quyết định', 'nghị quyết', 'luật', 'công văn', 'chỉ thị', 'kết luận', 'pháp lệnh'];
const documentWordBefore = wordsBefore(DOCUMENT_WORDS.flatMap((w) => [w, `${w} số`]));
const documentNumberRe = re(String.raw`(?<![\p{N}/.,])(\d{1,4})\/((?:19|20)\d{2})(?!\p{N})(\/(?=\p{L}))?`);
/**
 * The issuer after a document's number, read as newsreaders do ("Nghị định 100/2019/NĐ-CP" is "… năm hai nghìn không
 * trăm mười chín của Chính phủ", never "nghị định" twice). Codes not listed are left to the other rules.
 */
const DOCUMENT_ISSUERS: Record<string, string> = {
  'NĐ-CP': 'của Chính phủ', 'NQ-CP': 'của Chính phủ', 'QĐ-TTg': 'của Thủ tướng Chính phủ', 'CT-TTg': 'của Thủ tướng Chính phủ',
  'TT-BTC': 'của Bộ Tài chính', 'TT-BYT': 'của Bộ Y tế', 'TT-BGDĐT': 'của Bộ Giáo dục và Đào tạo', 'TT-NHNN': 'của Ngân hàng Nhà nước',
};
/** Not global: it is exec'd at one place at a time, where a global pattern would carry lastIndex between calls. */
const documentIssuerRe = new RegExp(String.raw`^(${Object.keys(DOCUMENT_ISSUERS).join('|')})(?![\p{L}\p{N}-])`, 'u');
const readDocumentNumber = (m: string, n: string, y: string, slash: string | undefined, offset: number, all: string): string => {
  if (!precededBy(all, offset, documentWordBefore, WINDOW)) return m;
  const issuer = slash ? documentIssuerRe.exec(all.slice(offset + m.length))?.[1] : undefined;
  // The issuer's code is dropped by the caller's second pass (ISSUER_MARK), which knows where it ends.
  return `${readCardinal(n)} năm ${readCardinal(y)}${issuer ? ` ${DOCUMENT_ISSUERS[issuer]}${ISSUER_MARK}` : slash ? ' ' : ''}`;
};
/** Marks where a document's issuer code follows its reading, so the code itself is taken out right after. */
const ISSUER_MARK = '\u0000';
const issuerCodeRe = re(String.raw`\u0000(?:${Object.keys(DOCUMENT_ISSUERS).join('|')})`);
/** "Q1/2024", "Q3.2023": a quarter with its year; a bare "Q1" is left (it is also District 1). */
const quarterRe = re(String.raw`${START}Q([1-4])[/.-]((?:19|20)\d{2})(?![\p{N}]|[.,]\d)`);
/** "ngõ 34/5", "Hẻm 123/45/6": an address's parts are joined by "trên", never a fraction or a date. */
const alleyRe = new RegExp(String.raw`${START}(ngõ|ngách|hẻm|kiệt|số nhà)\s(\d{1,4}(?:\/\d{1,4}){1,3})(?![\p{N}/]|[.,]\d)`, 'giu');
/**
 * "30/4-1/5", "30/4 - 1/5": the dash between two d/m is "đến" (readRanges would say so of two fractions too), so that
 * readDayMonths sees a range and the dash is not left unspoken between two dates.
 */
const dayMonthDashRe = re(String.raw`(?<=(?<![\p{N}/.,])\d{1,2}\/\d{1,2})\s?[-–]\s?(?=\d{1,2}\/\d{1,2}(?![\p{N}/]|[.,]\d))`);
/** "27-28/6", "12, 13 và 14/6", "10 đến 12/6": rising days that share one month. */
const DAY_JOIN = String.raw`\s?[-–]\s?|\s?,\s?|\s(?:và|hoặc|đến|tới)\s`;
const dayListRe = re(String.raw`(?<![\p{N}/.,\-–])(\d{1,2})((?:(?:${DAY_JOIN})\d{1,2}){1,4})\/(\d{1,2})(?![\p{N}/]|[-–.,]\d)`);
const dayListPartRe = re(String.raw`(${DAY_JOIN})(\d{1,2})`);

/** After a day word, a holiday, a time word or "từ", followed as a date: the days, then the month once. */
const readDayLists: Rule = (text) =>
  text.replace(dayListRe, (m, first: string, rest: string, mo: string, offset: number, all: string) => {
    const days = [first, ...Array.from(rest.matchAll(dayListPartRe), (part) => part[2])].map(Number);
    if (!validMonth(+mo) || !days.every((d, i) => validDay(d) && (i === 0 || d > days[i - 1]))) return m;
    const before = all.slice(Math.max(0, offset - WINDOW), offset);
    if (!dateFollows.test(all.slice(offset + m.length, offset + m.length + WINDOW))) return m;
    let lead: string | null = null;
    if (dayWordBefore.test(before) || holidayWordBefore.test(before)) lead = '';
    else if (timeWordBefore.test(before) || rangeStartBefore.test(before)) lead = 'ngày ';
    if (lead === null) return m;
    const list = rest.replace(dayListPartRe, (_p, join: string, d: string) => `${/[-–]/u.test(join) ? ' đến ' : join}${readCardinal(d)}`);
    return `${lead}${readCardinal(first)}${list} tháng ${readMonth(+mo)}`;
  });

/**
 * "Sáng 15.6,", "ngày 15.6 là": a day and month joined by a dot (a newspaper's house style) after a day word or a
 * time word, when followed as a date is; never a zero-padded month after a time word ("sáng 9.05" may be a time).
 * Elsewhere "15.6" stays a decimal, and "Sale 11.11" is left.
 */
const dotDayMonthRe = re(String.raw`(?<![\p{N}/.,\-–])(\d{1,2})\.(\d{1,2})(?![\p{N}/]|[-–.,]\d)`);
const readDotDayMonths: Rule = (text) =>
  text.replace(dotDayMonthRe, (m, d: string, mo: string, offset: number, all: string) => {
    if (!validDay(+d) || !validMonth(+mo) || !followedBy(all, offset + m.length, dateFollows, WINDOW)) return m;
    const before = all.slice(Math.max(0, offset - WINDOW), offset);
    let lead: string | null = null;
    if (dayWordBefore.test(before)) lead = '';
    else if (timeWordBefore.test(before) && !mo.startsWith('0')) lead = 'ngày ';
    return lead === null ? m : `${lead}${readCardinal(d)} tháng ${readMonth(+mo)}`;
  });

export const readDates: Rule = (text) =>
  readDotDayMonths(readDayMonths(readDayLists(readIsoDates(text)
    .replace(documentNumberRe, readDocumentNumber).replace(issuerCodeRe, '')
    .replace(quarterRe, (_m, q: string, y: string) => `quý ${readCardinal(q)} năm ${readCardinal(y)}`)
    .replace(alleyRe, (_m, word: string, parts: string) => `${word} ${parts.split('/').map((n) => readCardinal(n)).join(' trên ')}`)
    .replace(dayMonthDashRe, ' đến ')
    .replace(fullDateRe, (m, d: string, _sep, mo: string, y: string, offset: number, all: string) => readFullDate(d, mo, y, offset, all) ?? m)))
    .replace(monthYearRe, (m, mo: string, y: string, offset: number, all: string) => {
      if (!validMonth(+mo)) return m;
      const lead = precededBy(all, offset, /tháng\s$/iu) ? '' : 'tháng ';
      return `${lead}${readMonth(+mo)} năm ${readCardinal(y)}`;
    })
    .replace(monthWordRe, (m, mo: string) => (validMonth(+mo) ? readMonth(+mo) : m)));

const clockRe = re(String.raw`(?<![\p{N}:])(\d{1,2}):(\d{2})(?::(\d{2}))?(?![\p{N}:]|[.,]\d)`);
const hourMarkRe = re(String.raw`${START}(\d{1,2})h(\d{2})?(p|ph|')?${END}`);
/** "1:10", "1:50.000": a colon between numbers; a ratio when the second is grouped or a ratio word comes before. */
const ratioRe = re(String.raw`(?<![\p{N}:.,])(\d{1,3}(?:[.,]\d{3})*):(\d{1,3}(?:[.,]\d{3})+|\d{1,6})(?![\p{N}:]|[.,]\d)`);
const ratioWordBefore = wordsBefore(['tỷ lệ', 'tỉ lệ', 'pha loãng']);
/** Both sides must be numbers the number rules read: "1:30,200.000" mixes its separators (it threw). */
const wholeNumber = new RegExp(`^(?:${NUMBER_PATTERN})$`, 'u');
/** "pha 1:10 với nước": "pha" mixes only when what it mixes with follows ("pha 9:15" may be a play at 9:15). */
const mixWordBefore = wordsBefore(['pha']);
const mixedWithAfter = /^\s(?:với|vào|nước)(?!\p{L})/iu;
/** The dash between two clock times ("8h-17h", "19:30 - 21:00"): readRanges no longer sees digits on both sides once they are read. */
const timeRangeDashRe = re(String.raw`(?<=(?<![\p{L}\p{N}:])\d{1,2}(?:h(?:\d{2})?|:\d{2}(?::\d{2})?))\s?[-–]\s?(?=\d{1,2}(?:h|:\d{2}))`);

/**
 * "8-10h", "từ 14 - 16h": an hour range with the "h" on its second end only. The first hour is read here, with
 * "đến": once "10h" is words, the dash would be taken for a code's hyphen and dropped. Both ends at most 24.
 */
const hourRangeRe = re(String.raw`(?<![\p{L}\p{N}:.,/\-–])(\d{1,2})\s?[-–]\s?(?=(\d{1,2})h(?:\d{2})?(?:p|ph|')?${END})`);

function readClock(h: string, m: string | undefined, s: string | undefined, minuteWord: boolean): string | null {
  if (+h > 24 || (m !== undefined && +m > 59) || (s !== undefined && +s > 59)) return null;
  const parts = [`${readCardinal(h)} giờ`];
  if (m !== undefined && (+m > 0 || s !== undefined)) parts.push(readCardinal(m) + (minuteWord ? ' phút' : ''));
  if (s !== undefined) parts.push(`${readCardinal(s)} giây`);
  return parts.join(' ');
}

/**
 * "10am", "2pm", "8:30 AM", "10 a.m.": an hour of 1 to 12 with its half of the day, said the Vietnamese way ("mười
 * giờ sáng", "hai giờ chiều"; noon "trưa", 6 to 11 pm "tối", 12 am "đêm"). Glued in any case, or spaced in capitals
 * or with dots, whose last dot is left as punctuation ("có 5 am" and "am hiểu" are words).
 */
const meridiemRe = re(String.raw`(?<![\p{L}\p{N}:.,])(\d{1,2})(?::(\d{2}))?(?:([aApP])[mM]|\s(?:([AP])M|([ap])\.m))(?![\p{L}\p{N}])`);
function dayPart(h: number, pm: boolean): string {
  if (!pm) return h === 12 ? 'đêm' : 'sáng';
  if (h === 12) return 'trưa';
  return h <= 5 ? 'chiều' : 'tối';
}
/** "7g30": the southern "g" for giờ, only with its minutes ("7g" is seven grams). */
const southernHourRe = re(String.raw`${START}(\d{1,2})g(\d{2})${END}`);

export const readTimes: Rule = (text) =>
  text
    .replace(meridiemRe, (m, h: string, mi: string | undefined, glued?: string, caps?: string, dotted?: string) => {
      const half = (glued ?? caps ?? dotted)!.toLowerCase();
      if (+h < 1 || +h > 12) return m;
      const clock = readClock(h, mi, undefined, false);
      return clock === null ? m : `${clock} ${dayPart(+h, half === 'p')}`;
    })
    .replace(southernHourRe, (m, h: string, mi: string) => readClock(h, mi, undefined, false) ?? m)
    .replace(ratioRe, (m, a: string, b: string, offset: number, all: string) =>
      wholeNumber.test(a) && wholeNumber.test(b) && (/[.,]/u.test(b) || precededBy(all, offset, ratioWordBefore, WINDOW)
        || (precededBy(all, offset, mixWordBefore, WINDOW) && followedBy(all, offset + m.length, mixedWithAfter, 8)))
        ? `${readNumberToken(a)} trên ${readNumberToken(b)}`
        : m)
    .replace(hourRangeRe, (m, a: string, b: string) => (+a <= 24 && +b <= 24 ? `${readCardinal(a)} đến ` : m))
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
 * "5tr-7tr", "35°C-37°C", "200.000đ - 300.000đ", "3,25% - 3,5%": a rising range with the same unit on both ends
 * is "đến". Before separateCodeHyphens, which would drop the hyphen after the letters ("5tr-7tr" → "5tr 7tr");
 * the spaced dash never reached readRanges (a unit, not a digit, stands before it). "COVID-19", "B2-05",
 * "i7-13700H" have no amount with a unit on both sides and stay codes.
 */
const RANGE_UNITS = alternation([...Object.keys(UNITS), ...Object.keys(CURRENCY_AFTER), 'k', 'K', 'tr', '%']);
const unitRangeRe = re(String.raw`(?<![\p{L}\p{N}.,])(${NUMBER_PATTERN})(\s?)(${RANGE_UNITS})(\s?[-–]\s?)(${NUMBER_PATTERN})\2\3(?![\p{L}\p{N}])`);
export const UNIT_RANGE_GATE = /[^\d\s]\s?[-–]\s?\d/u;
/** The value of a written number, for comparing the ends of a range ("200.000", "3,25", "1,000,000.5"). */
function numberValue(token: string): number {
  if (/^\d{1,3}(?:\.\d{3})+(?:,\d+)?$/u.test(token)) return Number(token.replace(/\./gu, '').replace(',', '.'));
  if (/^\d{1,3}(?:,\d{3}){2,}(?:\.\d+)?$/u.test(token)) return Number(token.replace(/,/gu, ''));
  return Number(token.replace(',', '.'));
}
export const readUnitRanges: Rule = (text) =>
  text.replace(unitRangeRe, (m, a: string, space: string, unit: string, _dash, b: string) =>
    (numberValue(a) < numberValue(b) ? `${a}${space}${unit} đến ${b}${space}${unit}` : m));

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

/**
 * A score after these words ("thắng 2-1", "nâng tỷ số lên 2-1", "dẫn trước 1-0", "Kết quả: 2-1", "(hiệp 1: 1-0)")
 * is read "hai – một", not as a range. Lower case only ("Bé Thắng 3-4 tuổi" names a child), except "Tỷ số",
 * "Kết quả", "Chung cuộc" opening a sentence.
 */
const scoreWordBefore = new RegExp(String.raw`(?:^|[^\p{L}])(?:(?:[tT][ỷỉ] số(?: (?:chung cuộc|lên|là)){0,2}|thắng|thua|hòa|hoà|dẫn(?: trước)?|đánh bại|[kK]ết quả|[cC]hung cuộc(?: là)?)\s?:?|[hH]iệp \d{1,2}:)\s$`, 'u');
/** Up to three capitalised words (a team's name, "U23 Thái Lan") between the word and the score. */
const namesAtEnd = /(?<=\s)(?:\p{Lu}[\p{L}\p{N}]*\s){1,3}$/u;
/** The same at the start of the text ("Arsenal 0-2 Chelsea"), where no blank stands before the name. */
const namesAtStart = /^(?:\p{Lu}[\p{L}\p{N}]*\s){1,3}$/u;
const teamAfter = /^\s\p{Lu}/u;
/** What follows a score: the end, punctuation, or a word that is not a counted noun ("thắng 3-5 trận", "thua 2-3 bàn", "5-7 kg" are ranges). */
const SCORE_FOLLOWERS = ['trước', 'tại', 'ở', 'và', 'sau', 'trong', 'khi', 'nhờ', 'với', 'hôm', 'ngày', 'tối', 'chiều', 'sáng', 'đêm', 'để', 'nhưng', 'rồi', 'qua', 'của', 'trên sân'];
const scoreFollows = endOrFollowedBy(`.,;:!?()\\]"”'’…`, SCORE_FOLLOWERS);
/** A descending pair after these is a range written the wrong way round ("từ 10-5"), not a score. */
const rangeWordBefore = wordsBefore(['từ', 'khoảng', 'tầm', 'chừng']);
/** The next score of a list ("6-4, 6-7", "Hà Nội 2-1 HAGL, Viettel 1-2 Nam Định"): a comma or "và", team names either side. */
const scoreListGap = /^(?:\s\p{Lu}[\p{L}\p{N}]*){0,3}\s?(?:,|;|và)\s(?:\p{Lu}[\p{L}\p{N}]*\s){0,3}$/u;
/**
 * "Việt Nam 1-2 Thái Lan", "Arsenal 0-2 Chelsea": a pair of small numbers (0 to 20) between two teams' names is a
 * score, rising or not. Not when the word before numbers things ("Điều 5-7 Luật Đất đai", "Chương 1-3 Kinh Thánh")
 * or the word after is counted ("Tăng 1-2 Độ" in a title-case headline).
 */
const NUMBERING_WORDS = [
  'Điều', 'Khoản', 'Điểm', 'Chương', 'Mục', 'Phần', 'Trang', 'Bài', 'Câu', 'Tập', 'Lớp', 'Phòng', 'Tầng', 'Số', 'Quận',
  'Phường', 'Tuổi', 'Ngày', 'Tháng', 'Năm', 'Thứ', 'Tuần', 'Kỳ', 'Kì', 'Khu', 'Lô', 'Dãy', 'Tòa', 'Toà', 'Nhà', 'Hẻm', 'Ngõ',
  'Ngách', 'Đường', 'Tuyến', 'Xe', 'Ghế', 'Hàng', 'Cửa', 'Bàn', 'Cấp', 'Độ', 'Khóa', 'Khoá', 'Lần', 'Top', 'Size', 'Level',
  'Mẫu', 'Loại', 'Hạng', 'Nhóm', 'Tổ', 'Đội', 'Vòng', 'Hiệp', 'Ván', 'Set', 'Game', 'Bảng', 'Trận', 'Từ', 'Khoảng', 'Tầm',
  'Chừng', 'Gần', 'Hơn', 'Trên', 'Dưới', 'Tăng', 'Giảm', 'Mất', 'Còn', 'Có', 'Cần', 'Mỗi', 'Cả', 'Các', 'Những', 'Giờ',
  'Mùng', 'Mồng', 'Hôm', 'Sáng', 'Trưa', 'Chiều', 'Tối', 'Đêm', 'Lúc', 'Tết',
];
const numberingWordBefore = new RegExp(`(?:^|[^\\p{L}])(?:${alternation(NUMBERING_WORDS)})\\s$`, 'u');
const COUNTED_WORDS = [
  'Nghìn', 'Ngàn', 'Triệu', 'Tỷ', 'Tỉ', 'Người', 'Ngày', 'Tháng', 'Năm', 'Giờ', 'Phút', 'Giây', 'Tuần', 'Lần', 'Độ', 'Điểm',
  'Bàn', 'Trận', 'Tuổi', 'Con', 'Cái', 'Chiếc', 'Đồng', 'Tiếng', 'Mét', 'Lít', 'Tấn', 'Phần', 'Căn', 'Phòng', 'Ca', 'Mũi',
  'Liều', 'Viên', 'Ly', 'Cốc', 'Chai', 'Bước', 'Cách', 'Km', 'Kg', 'Cm', 'Điều', 'Khoản', 'Chương', 'Trang', 'Tết',
];
const countedAfter = new RegExp(`^\\s(?:${alternation(COUNTED_WORDS)})(?!\\p{L})`, 'u');
const SMALL_SCORE = 20;
/** Not inside a chain ("4-4-2", "1/2-3/4") or a code ("B2-05": a letter before is checked where it matters). */
const scoreRe = /(?<![\p{N}.,/\-–])(\d{1,2})\s?[-–]\s?(\d{1,2})(?![\p{N}/]|[.,\-–]\d)/gu;

/**
 * "5-10" is a range; runs after dates and phone numbers have taken their dashes. A pair is a score after a
 * score word, in a list after a score, or when it cannot be a range: the first at least the second ("3-1",
 * "0-0", "Hà Nội 2-1 HAGL"), with no letter glued before it and no range word ("từ") before.
 */
export const readRanges: Rule = (text) => {
  let lastEnd = -1;
  return text
    .replace(scoreRe, (m, a: string, b: string, offset: number, all: string) => {
      const before = all.slice(Math.max(0, offset - WINDOW), offset);
      const named = namesAtEnd.test(before) || (offset <= WINDOW && namesAtStart.test(before));
      const follows = followedBy(all, offset + m.length, scoreFollows, WINDOW)
        || (named && followedBy(all, offset + m.length, teamAfter, 2));
      if (!follows) return m;
      const listed = lastEnd >= 0 && offset - lastEnd <= WINDOW && scoreListGap.test(all.slice(lastEnd, offset));
      const worded = scoreWordBefore.test(before) || (named && scoreWordBefore.test(before.replace(namesAtEnd, '')));
      const descending = +a >= +b && (offset === 0 || !LETTER.test(pointBefore(all, offset))) && !rangeWordBefore.test(before);
      const versus = named && +a <= SMALL_SCORE && +b <= SMALL_SCORE && followedBy(all, offset + m.length, teamAfter, 2)
        && !numberingWordBefore.test(before) && !followedBy(all, offset + m.length, countedAfter, 10);
      if (!listed && !worded && !descending && !versus) return m;
      lastEnd = offset + m.length;
      return `${readCardinal(a)} – ${readCardinal(b)}`;
    })
    .replace(/(?<=\d)\s?[-–]\s?(?=\d)/gu, ' đến ');
};

/** A minus sign (or an en dash) that starts a token is "âm" ("-5°C", "–5°C"). */
export const readNegatives: Rule = (text) => text.replace(/(?<=^|[\s(])[-−–](?=\d)/gmu, 'âm ');

/**
 * Signs read before numbers are read: "~50" is "khoảng năm mươi", "2 × 3"
 * "hai nhân ba", "2+3=5" "hai cộng ba bằng năm", "18+" "mười tám cộng";
 * ≥ ≤ ± ≈ ÷ are read wherever they stand. Runs on every text
 * (its own quick test is the gate).
 */
const SIGN_GATE = /[~×≥≤±≈÷+=]/u;
const SIGN_WORDS: Record<string, string> = {
  '≥': 'lớn hơn hoặc bằng', '≤': 'nhỏ hơn hoặc bằng', '±': 'cộng trừ', '≈': 'xấp xỉ', '÷': 'chia',
};
export const readSigns: Rule = (text) =>
  !SIGN_GATE.test(text)
    ? text
    : text
      .replace(/[≥≤±≈÷]/gu, (sign) => ` ${SIGN_WORDS[sign]} `)
      .replace(/(?<![\p{L}\p{N}~])~\s?(?=\d)/gu, (_m, offset: number, all: string) => (precededBy(all, offset, /khoảng\s$/iu, 8) ? '' : 'khoảng '))
      .replace(/(?<=\d\s?)×(?=\s?\d)/gu, ' nhân ')
      // "2+3=5": between numbers these are arithmetic; "18+" (an age rating, "10+ năm") is the number and more.
      .replace(/(?<=\d\s?)\+(?=\s?\d)/gu, ' cộng ')
      .replace(/(?<=\d\s?)=(?=\s?\d)/gu, ' bằng ')
      .replace(/(?<=\d)\+(?![\p{L}\p{N}+])/gu, ' cộng')
      // "(+1,02%)", "hiệu số +15", "tăng +5%": a sign opening a figure; "+84" and an international number in groups
      // ("+1 555 123 4567") are phone numbers, left to their rule.
      .replace(/(?<=^|[\s(\[:])\+(?=\d)(?!84|\d{1,3}[ .-]\d{2})/gu, 'cộng ');

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
  // Gold, oil and share prices, rents and orders ("đồng/lượng", "USD/ounce", "đồng/cp", "tỷ/căn", "30k/đơn").
  lượng: 'lượng', chỉ: 'chỉ', ounce: 'ounce', thùng: 'thùng', cp: 'cổ phiếu', 'cổ phiếu': 'cổ phiếu', căn: 'căn', đơn: 'đơn',
  viên: 'viên', lần: 'lần', đêm: 'đêm', phòng: 'phòng', khách: 'khách', hộ: 'hộ', con: 'con', bao: 'bao', vé: 'vé',
  buổi: 'buổi', ca: 'ca', sào: 'sào', USD: 'đô la Mỹ',
};
/**
 * "25.000đ/kg", "3 lần/ngày", "5 triệu/tháng", "6%/năm": a slash between a counted word (right after an amount) and a
 * unit or time word is "mỗi", and the unit is read ("kg" was spelled letter by letter, the slash silent). Up to two
 * words may stand between the amount and the slash ("2,34 triệu đồng/tháng", "5 tỷ kWh/năm"), and a second slash
 * is a second "mỗi" ("3 triệu/người/tháng"). A unit that holds its slash ("µg/m³", "mmol/L") is the unit rule's.
 * The amount is required: "ngày/tháng/năm sinh" and "và/hoặc" are left alone.
 */
const PER_ALT = alternation(Object.keys(PER_WORDS));
const perUnitRe = re(`(?<=\\d\\s?)(\\p{L}{1,8}|%)((?:\\s\\p{L}{1,8})?)\\/(${PER_ALT})(?:\\/(${PER_ALT}))?${END}`);
export const PER_UNIT_GATE = /[\p{L}%]\//u;
export const readPerUnit: Rule = (text) =>
  text.replace(perUnitRe, (m, word: string, second: string, unit: string, next: string | undefined) => {
    if (second === '' && `${word}/${unit}` in UNITS) return m;
    return `${word}${second} mỗi ${PER_WORDS[unit]}${next === undefined ? '' : ` mỗi ${PER_WORDS[next]}`}`;
  });

const percentRe = re(`(?<!\\p{N})${NUM}\\s?%`);
export const readPercentages: Rule = (text) =>
  text.replace(percentRe, (_m, num: string) => `${readNumberToken(num)} phần trăm`);

const UNIT_ALT = alternation(Object.keys(UNITS));
/** "5 tỷ kWh", "1,5 tỷ m3": a unit after a scale word is read too; only units of two letters or more ("5 triệu m" is left). */
const SCALE_WORDS = ['tỷ', 'tỉ', 'triệu', 'nghìn', 'ngàn'];
const unitRe = re(`(?<!\\p{N})${NUM}(?:\\s(${alternation(SCALE_WORDS)})(?=\\s))?\\s?(${UNIT_ALT})${END}`);
/** "140/90mmHg", "1/2 kg": a slashed pair before a unit, read as readFractions reads it, then the unit. */
const slashUnitRe = re(`(?<![\\p{N}/.,])(\\d{1,4})\\/(\\d{1,4})\\s?(${UNIT_ALT})${END}`);
/** What readUnits needs: a digit or a scale word, maybe a space, then a unit (or the "A" of amperes). */
export const UNIT_GATE = new RegExp(`(?:\\d|${alternation(SCALE_WORDS)})\\s?(?:${UNIT_ALT}|A)`, 'u');
/**
 * "5V/2A", "5V 2A" (a charger's output): volts and amperes, "năm vôn, hai am pe" ("am pe" as in "mAh"). A bare "2A" is
 * amperes only after a word about current ("sạc 2A", "dòng điện 2A", "cầu chì 10A"): "lớp 12A", "nhà 5A" are names.
 */
const voltAmpRe = re(`(?<![\\p{L}\\p{N}.,])${NUM}\\s?V(?:\\s?\\/\\s?|\\s)${NUM}\\s?A${END}`);
const ampsRe = re(`(?<![\\p{L}\\p{N}.,])${NUM}\\s?A${END}`);
const currentWordBefore = wordsBefore(['sạc', 'dòng', 'dòng điện', 'dòng sạc', 'dòng ra', 'cường độ', 'cầu chì', 'aptomat', 'cb', 'tối đa', 'output', 'input']);

/**
 * "1m75", "1m7", "2m5": a height or a length, metres then centimetres or tenths. Never one digit 2 or 3 after the "m"
 * ("5m2", "1m3" are square and cubic metres).
 */
const heightRe = re(String.raw`${START}(\d)m(\d{2}|[14-9])${END}`);
/** "1990s": a decade ("những năm một nghìn chín trăm chín mươi"), not seconds. */
const decadeRe = /^(?:19|20)\d0$/u;
/** "những năm 1990s", "thập niên 1990s": the words are already there. */
const decadeWordBefore = /(?:năm|thập niên|thập kỷ|thập kỉ)\s$/iu;

export const readUnits: Rule = (text) =>
  text
    .replace(heightRe, (_m, metres: string, cm: string) => `${readCardinal(metres)} mét ${readCardinal(cm)}`)
    .replace(voltAmpRe, (_m, volts: string, amps: string) => `${readNumberToken(volts)} vôn, ${readNumberToken(amps)} am pe`)
    .replace(ampsRe, (m, amps: string, offset: number, all: string) =>
      (precededBy(all, offset, currentWordBefore, 16) ? `${readNumberToken(amps)} am pe` : m))
    .replace(slashUnitRe, (_m, a: string, b: string, unit: string) => `${readSlashPair(a, b)} ${UNITS[unit]}`)
    .replace(unitRe, (m, num: string, scale: string | undefined, unit: string, offset: number, all: string) => {
      if (scale !== undefined) return unit.length < 2 ? m : `${readNumberToken(num)} ${scale} ${UNITS[unit]}`;
      if (unit !== 's' || m.length !== num.length + 1 || !decadeRe.test(num)) return `${readNumberToken(num)} ${UNITS[unit]}`;
      return `${precededBy(all, offset, decadeWordBefore) ? '' : 'những năm '}${readCardinal(num)}`;
    });

/** "50k", "2tr", "3 tr": informal amounts without a currency ("k" only glued: a lone "k" is also "không"). */
const scaleSuffixRe = re(`(?<!\\p{N})${NUM}(k|K|\\s?tr)${END}`);
/**
 * "1tr2" (một triệu hai), "12tr5", "2tr990k", "2tr500": millions, then one digit said as it is written (hundreds of
 * thousands) or the thousands. Two digits ("1tr25", 1,250,000) are tens of thousands, said in full ("một triệu hai
 * trăm năm mươi nghìn"): "một triệu hai mươi lăm" would sound like 1,000,025.
 */
const millionsAndRe = re(String.raw`(?<!\p{N})(\d{1,3})tr(?:(\d)|(\d{2})|(\d{3})|(\d{1,3})[kK])${END}`);
/** "màn hình 4K", "video 8K": a screen resolution, said with the letter's name, not an amount. */
const RESOLUTIONS = new Set(['4K', '8K']);
export const readScaleSuffixes: Rule = (text) =>
  text
    .replace(millionsAndRe, (_m, millions: string, digit?: string, tens?: string, hundreds?: string, thousands?: string) => {
      if (tens !== undefined) return readCardinal(`${millions}${tens}0000`);
      return `${readCardinal(millions)} triệu ${digit !== undefined ? readDigits(digit) : `${readCardinal(hundreds ?? thousands!)} nghìn`}`;
    })
    .replace(scaleSuffixRe, (m, num: string, s: string) => (RESOLUTIONS.has(m) ? `${readCardinal(num)} ca` : amount(num, s.trim())));

/** "thứ 2", "THỨ 2"; not "thứ 1.000", which the cardinal rule reads whole. */
const AFTER_THU = '(?<=[tT][hH][ứỨ] )';
const ordinalRe = re(String.raw`${AFTER_THU}(\d{1,2})(?![\p{N}]|[.,]\d)`);
/** "thứ 2-6": from one day of the week to another, each said as a day ("thứ hai đến thứ sáu"). */
const weekdayRangeRe = re(String.raw`${AFTER_THU}([2-7])\s?[-–]\s?([2-7])(?![\p{N}]|[.,]\d)`);
/** "thứ 2, 4, 6", "thứ 3 và 5": every day of a list is a day ("tư", not "bốn"). */
const weekdayListRe = re(String.raw`${AFTER_THU}([2-7])((?:(?:\s?,\s?|\s(?:và|hoặc)\s)[2-7])+)(?![\p{N}]|[.,]\d)`);
/** What follows a list of days, as opposed to the counted noun in "vào thứ 2, 3 người đến". */
const weekdayListFollows = endOrFollowedBy(`.,;:!?)\\]"”'’…`, [...DATE_FOLLOWERS, 'tuần', 'chủ nhật', 'cn']);
export const readOrdinals: Rule = (text) =>
  text
    .replace(weekdayRangeRe, (m, a: string, b: string) => (+a < +b ? `${readOrdinal(+a)} đến thứ ${readOrdinal(+b)}` : m))
    .replace(weekdayListRe, (m, first: string, rest: string, offset: number, all: string) =>
      (followedBy(all, offset + m.length, weekdayListFollows, WINDOW) ? readOrdinal(+first) + rest.replace(/[2-7]/gu, (d) => readOrdinal(+d)) : m))
    .replace(ordinalRe, (_m, n: string) => readOrdinal(+n));

/** Words after which an upper-case Roman numeral is read, matched case-insensitively ("Thế Kỷ XX", "THẾ KỶ XXI"). */
const ROMAN_CONTEXTS = [
  'thế kỷ', 'thế kỉ', 'thế chiến', 'đại hội', 'khóa', 'khoá', 'chương', 'phần', 'quý', 'cấp', 'tập', 'mục',
  'giai đoạn', 'kỳ', 'kì', 'thứ',
];
const romanContextBefore = new RegExp(`(${alternation(ROMAN_CONTEXTS)}) $`, 'iu');
/** Contexts where a size (XL), an acronym (CD, DI) or a set's name ("tập X") is likelier: I, V and X only, and "tập" two letters. */
const NARROW_ROMAN_CONTEXTS = new Set(['quý', 'cấp', 'tập', 'mục', 'giai đoạn', 'kỳ', 'kì', 'thứ']);
/** "V.I.P.": a letter followed by a dot and another letter is an initial. */
const initialAfter = /^\.\p{L}/u;
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
    if (context === null) return year === undefined ? readNumeralAfterName(m, roman, offset, all) : m;
    if (precededBy(all, offset, compoundPhanBefore, 20)) return m;
    const word = context[1].toLowerCase();
    const ordinal = word === 'thứ';
    if (roman.length === 1 && (ordinal || word === 'tập' || 'CDLM'.includes(roman))) return m;
    if (NARROW_ROMAN_CONTEXTS.has(word) && !/^[IVX]+$/u.test(roman)) return m;
    if (followedBy(all, offset + m.length, initialAfter, 2)) return m;
    const n = parseRoman(roman);
    if (n === null) return m;
    const reading = ordinal ? readOrdinal(n) : readCardinal(String(n));
    return year === undefined ? reading : `${reading} năm ${readCardinal(year)}`;
  });

/**
 * "Napoleon III", "Vua Louis XIV", "Elizabeth II": after a capitalised name in plain Latin letters (no Vietnamese
 * diacritics, three letters or more) a numeral of two letters or more from II to XX is a monarch's or a pope's
 * ordinal ("Louis thứ mười bốn"); after a word that numbers a kind ("Type II", "Phase III") it is a cardinal. A lone
 * I, V, X, C, D, L or M is an initial, and nothing else is touched. "Chiến tranh thế giới II": "thứ hai" (I to III).
 */
const latinNameBefore = /(?:^|[^\p{L}])([A-Z][a-z]{2,})\s$/u;
const NUMBERED_KINDS = new Set([
  'Type', 'Part', 'Phase', 'Class', 'Level', 'Mark', 'Gen', 'Version', 'Chapter', 'Section', 'Vol', 'Volume', 'Grade',
  'Stage', 'Tier', 'Round', 'Act', 'Book', 'Season', 'Episode', 'Series', 'Model', 'Category', 'Group',
]);
const worldWarBefore = wordsBefore(['chiến tranh thế giới']);
function readNumeralAfterName(m: string, roman: string, offset: number, all: string): string {
  if (followedBy(all, offset + m.length, initialAfter, 2)) return m;
  const n = parseRoman(roman);
  if (n === null) return m;
  if (precededBy(all, offset, worldWarBefore, 24)) return n <= 3 ? `thứ ${readOrdinal(n)}` : m;
  const name = latinNameBefore.exec(all.slice(Math.max(0, offset - 24), offset));
  if (name === null || roman.length < 2 || n < 2 || n > 20) return m;
  return NUMBERED_KINDS.has(name[1]) ? readCardinal(String(n)) : `thứ ${readOrdinal(n)}`;
}

/** A proper fraction is "phần" ("phần tư" over 4), anything else "trên" ("24/7", "140/90"). */
function readSlashPair(a: string, b: string): string {
  return +a < +b ? `${readCardinal(a)} phần ${+b === 4 ? 'tư' : readCardinal(b)}` : `${readCardinal(a)} trên ${readCardinal(b)}`;
}

export const readFractions: Rule = (text) =>
  text.replace(/(?<![\p{N}/])(\d{1,4})\/(\d{1,4})(?![\p{N}/])/gu, (_m, a: string, b: string) => readSlashPair(a, b));

const remainingNumberRe = re(`(?<!\\p{N})${NUM}(?![\\p{N}])`);
/** "ngày 05", "07 giờ", "phạt 01 năm": a two-digit number with a leading zero next to a date or time word is its value. */
const zeroPadWordBefore = /(?:^|[^\p{L}])(?:ngày|mùng|mồng|tháng)\s$/iu;
const zeroPadWordAfter = /^\s(?:giờ|phút|giây)(?!\p{L})/iu;
/** "số 05 ngày 12/3", "bàn số 07": a numbered thing is a code whatever follows. */
const codeWordBefore = wordsBefore(['số', 'mã', 'phòng', 'bàn', 'căn']);
/** A number glued to letters ("U23", "H5N1", "VTV1") is set apart from them by spaces once it is words. */
export const readRemainingNumbers: Rule = (text) =>
  text.replace(remainingNumberRe, (_m, num: string, offset: number, all: string) => {
    const end = offset + num.length;
    const padded = /^0\d$/u.test(num) && !precededBy(all, offset, codeWordBefore, 8)
      && (precededBy(all, offset, zeroPadWordBefore, 8) || followedBy(all, end, zeroPadWordAfter, 8));
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
