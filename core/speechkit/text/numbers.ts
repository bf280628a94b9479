/**
 * Vietnamese reading of numbers. Works on digit strings rather than JS
 * numbers so that amounts beyond 2^53 (ledger totals, IDs read aloud) keep
 * every digit.
 */

export const DIGIT_WORDS = ['không', 'một', 'hai', 'ba', 'bốn', 'năm', 'sáu', 'bảy', 'tám', 'chín'] as const;

/** Month 4 is read "tư", not "bốn", in dates. */
const MONTH_WORDS = ['', 'một', 'hai', 'ba', 'tư', 'năm', 'sáu', 'bảy', 'tám', 'chín', 'mười', 'mười một', 'mười hai'];

/**
 * Reads 0..999. `full` is set when something bigger was already read, so the
 * hundreds and the "linh" must be spoken ("một nghìn không trăm linh năm").
 */
function readTriple(n: number, full: boolean): string {
  const h = Math.floor(n / 100);
  const t = Math.floor(n / 10) % 10;
  const u = n % 10;
  const parts: string[] = [];
  const saidHundreds = h > 0 || full;
  if (saidHundreds) parts.push(DIGIT_WORDS[h], 'trăm');
  if (t === 0) {
    if (u > 0) {
      if (saidHundreds) parts.push('linh');
      parts.push(DIGIT_WORDS[u]);
    }
  } else if (t === 1) {
    parts.push('mười');
    if (u === 5) parts.push('lăm');
    else if (u > 0) parts.push(DIGIT_WORDS[u]);
  } else {
    parts.push(DIGIT_WORDS[t], 'mươi');
    if (u === 1) parts.push('mốt');
    else if (u === 4) parts.push('tư');
    else if (u === 5) parts.push('lăm');
    else if (u > 0) parts.push(DIGIT_WORDS[u]);
  }
  return parts.join(' ');
}

/** Reads up to nine digits as triples of triệu / nghìn / units. */
function readBlock(digits: string, full: boolean): string {
  const padded = digits.padStart(9, '0');
  const scales = ['triệu', 'nghìn', ''];
  const parts: string[] = [];
  let spoken = full;
  for (let i = 0; i < 3; i++) {
    const v = Number(padded.slice(i * 3, i * 3 + 3));
    if (v === 0) continue;
    parts.push(readTriple(v, spoken));
    if (scales[i]) parts.push(scales[i]);
    spoken = true;
  }
  return parts.join(' ');
}

function stripZeros(digits: string): string {
  const s = digits.replace(/^0+/, '');
  return s === '' ? '0' : s;
}

/**
 * Beyond this many digits nobody says a quantity; the digits are a code
 * (card, account) and are read one by one. It also keeps the reading of any
 * written number short: a cardinal of 15 digits is at most about 110 letters.
 */
export const MAX_CARDINAL_DIGITS = 15;

/** Cardinal reading of a non-negative integer given as digits, e.g. "1000005". */
export function readCardinal(digits: string): string {
  if (!/^\d+$/.test(digits)) throw new RangeError(`not a digit string: ${digits}`);
  const significant = stripZeros(digits);
  if (significant.length > MAX_CARDINAL_DIGITS) return readDigits(digits);
  return readCardinalFrom(significant, false);
}

function readCardinalFrom(digits: string, full: boolean): string {
  if (digits === '0') return DIGIT_WORDS[0];
  if (digits.length <= 9) return readBlock(digits, full);
  // Above 10^9 Vietnamese stacks "tỷ": 5001 tỷ reads as "năm nghìn không trăm linh một tỷ".
  const high = digits.slice(0, -9);
  const low = digits.slice(-9);
  const head = `${readCardinalFrom(high, full)} tỷ`;
  return Number(low) === 0 ? head : `${head} ${readBlock(low, true)}`;
}

/** Digit-by-digit reading, used for phone numbers and codes. */
export function readDigits(digits: string): string {
  let out = '';
  for (let i = 0; i < digits.length; i++) {
    const digit = digits.charCodeAt(i) - 0x30;
    // Anything but an ASCII digit (a space, a dot of a grouped number) is skipped.
    if (digit >= 0 && digit <= 9) out = out === '' ? DIGIT_WORDS[digit]! : `${out} ${DIGIT_WORDS[digit]}`;
  }
  return out;
}

/**
 * The part after the decimal comma: leading zeros are spoken one by one and a
 * short remainder as a number ("3,05" → "ba phẩy không năm", "3,14" → "ba phẩy
 * mười bốn"); long remainders are read digit by digit as people do.
 */
export function readFraction(digits: string): string {
  const zeros = /^0*/.exec(digits)![0].length;
  const rest = digits.slice(zeros);
  const words: string[] = Array(zeros).fill(DIGIT_WORDS[0]);
  if (rest) words.push(rest.length <= 3 ? readCardinal(rest) : readDigits(rest));
  return words.join(' ');
}

export function readDecimal(intDigits: string, fracDigits: string): string {
  return `${readCardinal(intDigits)} phẩy ${readFraction(fracDigits)}`;
}

/**
 * Reads a written number in Vietnamese or English notation:
 * "1.000.000" and "1,000,000" are thousands; "3,5" and "1.5" are decimals;
 * "10.000,5" mixes both. Integers with a leading zero ("007") are codes and
 * are read digit by digit.
 */
export function readNumberToken(token: string): string {
  if (/^\d{1,3}(\.\d{3})+(,\d+)?$/.test(token)) {
    const [int, frac] = token.split(',');
    const digits = int.replace(/\./g, '');
    return frac === undefined ? readCardinal(digits) : readDecimal(digits, frac);
  }
  if (/^\d{1,3}(,\d{3}){2,}(\.\d+)?$/.test(token)) {
    const [int, frac] = token.split('.');
    const digits = int.replace(/,/g, '');
    return frac === undefined ? readCardinal(digits) : readDecimal(digits, frac);
  }
  const decimal = /^(\d+)[.,](\d+)$/.exec(token);
  if (decimal) return readDecimal(decimal[1], decimal[2]);
  if (/^\d+$/.test(token)) {
    if (token.length > 1 && token.startsWith('0')) return readDigits(token);
    if (token.length > MAX_CARDINAL_DIGITS) return readDigits(token);
    return readCardinal(token);
  }
  throw new RangeError(`not a number token: ${token}`);
}

/** Source of a regex matching what readNumberToken accepts (no anchors, no groups). */
export const NUMBER_PATTERN = String.raw`\d{1,3}(?:\.\d{3})+(?:,\d+)?|\d{1,3}(?:,\d{3}){2,}(?:\.\d+)?|\d+(?:[.,]\d+)?`;

export function readMonth(month: number): string {
  return MONTH_WORDS[month] ?? readCardinal(String(month));
}

/** "thứ 1" is "thứ nhất" and "thứ 4" is "thứ tư" (weekdays and ordinals alike). */
export function readOrdinal(n: number): string {
  if (n === 1) return 'nhất';
  if (n === 4) return 'tư';
  return readCardinal(String(n));
}

const ROMAN: Record<string, number> = { I: 1, V: 5, X: 10, L: 50, C: 100, D: 500, M: 1000 };

/** Parses a well-formed Roman numeral; null when the letters are not one. */
export function parseRoman(s: string): number | null {
  // MMMCMXCIX (3999) is the longest value written with these letters: 15 covers every well-formed one.
  if (s.length > 15 || !/^[IVXLCDM]+$/.test(s)) return null;
  let total = 0;
  for (let i = 0; i < s.length; i++) {
    const v = ROMAN[s[i]];
    const next = ROMAN[s[i + 1]] ?? 0;
    total += v < next ? -v : v;
  }
  return toRoman(total) === s ? total : null;
}

function toRoman(n: number): string {
  const table: Array<[number, string]> = [
    [1000, 'M'], [900, 'CM'], [500, 'D'], [400, 'CD'], [100, 'C'], [90, 'XC'],
    [50, 'L'], [40, 'XL'], [10, 'X'], [9, 'IX'], [5, 'V'], [4, 'IV'], [1, 'I'],
  ];
  let out = '';
  for (const [v, sym] of table) {
    while (n >= v) {
      out += sym;
      n -= v;
    }
  }
  return out;
}
