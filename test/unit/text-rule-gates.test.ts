import test from 'ava';
import { GATED_PIPELINE, normalizeText } from '../../core/speechkit/text/prepare.ts';
import { separateCodeHyphens } from '../../core/speechkit/text/rules.ts';
import { generatedStrings } from '../helpers/generated-strings.ts';
import { ABBREVIATIONS, CURRENCY_AFTER, CURRENCY_BEFORE, SCALE_SUFFIXES, UNITS } from '../../core/speechkit/text/lexicon.ts';

// Everything a rule reacts to, and the neighbours that decide whether it does: digits (a leading 0, long
// runs), separators, clock and date words, Roman numerals after their context words, dashes and minus
// signs, symbols, every currency, unit, scale suffix and abbreviation of the lexicon, cue tags and blanks.
const PIECES = [
  'a', 'Xin chào', 'Đ', 'ệ', ' ', '  ', '\n', '\r\n', '\t', '\u00a0', '\u3000', '.', ',', '…', '!', '?', ';', ':', '(', ')', '/', '-', '–', '−',
  '+', '+84', '0', '1', '7', '09', '12', '2024', '0912345678', '0912 345 678', '1.000.000', '3,14', '1,000,000.5', '9'.repeat(40), '1.2'.repeat(12),
  '5-10', '3 – 4', '1/2', '3/4', '2-9-1945', '2.9.1945', '2/9/1945', '9/2024', 'Q.', 'P. ', ' -5', '(−3', 'h', '7h30', '10:30', '23:59:59', 'ngày ', 'tháng ', 'thứ ', 'Thứ ', 'THỨ ', ', ', ' và ', '=', '4K', 'mùng ', 'thế kỷ ', 'Chương ', 'phần ', 'XIV', 'X', 'IV', 'M',
  '%', '&', '*', '_', '`', '~', '#', '|', '[', ']', '[cười]', '[thở dài]', '[khác]', 'k', 'K', 'tr', 'COVID', '𝟕', '\u200b', 'e\u0301',
  // Codes, hour and unit ranges, day lists, scores, informal amounts, quarters, documents and addresses.
  'mã ', 'Mã OTP: ', 'mật khẩu ', 'PIN ', '482915', 'Mã OTP: 482915', 'mã 5678', '8-10h', ' 14 - 16h', '27-28/6', '12, 13 và 14/6', '30/4-1/5', '5tr-7tr', '35°C-37°C',
  '200.000đ - 300.000đ', '1tr2', '2tr990k', ' tr', 'thắng ', 'Kết quả: ', 'Hà Nội ', '3-1', ' HAGL', 'Q1/2024', 'Q3.2023',
  'Chương IV', 'Nghị định ', '100/2019/NĐ-CP', 'ngõ ', 'Hẻm 123/45/6', 'đường ', 'Sáng nay (', 'kể từ ', 'từ ', ' âm lịch', '(hiệp 1: ',
  // Heights, arithmetic, slashed units, dot dates, per-unit words, signs, phones, versions, teencode, am/pm, names.
  '1m7', '2m5', '5x20m', ' x ', 'x', '10 - 3 = 7', '6 : 2 = 3', '0x1F', '140/90mmHg', ' tỷ ', 'triệu ', 'Sáng 15.6', '15.6', 'đồng/lượng',
  '/người/tháng', '/cp', '(+1,02%)', ' +15', '(+84) ', '912 345 678', '1900 54 54 54', 'gọi ', 'Tổng đài ', '113', '114, 115', '17.4.1', 'v1.2.3',
  ' ko', ' dc', ' j', ' r', 'ng ', ' vs ', 'mn', '10am', '2pm', ' AM', 'a.m.', '7g30', 'Napoleon ', 'III', 'Louis XIV', 'Type ', 'thế giới II',
  // Emoji, emoticons, licence plates, chat words with their neighbours, electrical units, team names and long codes.
  '😀', '🎉', '❤️', '👍🏽', '🇻🇳', '1️⃣', '⭐', '★', '©', ' :)', ':(', ' :D', ' ^^', ' <3', ' :))', ' =))', ':v', ' x', '29A-123.45', '30E-12345',
  '29B1-', ' kh', ' bn', ' biết', ' tiền', 'các ', ' ơi', 'giá ', 'hay ', '5V/2A', 'sạc ', '2A', '10mA', 'Việt Nam ', ' Thái Lan', '1-2', '1tr25',
  'mã đơn hàng ', 'Mã vận đơn: ', 'hộ chiếu số ', 'số hợp đồng ', 'DH12345', 'C1234567', '123456789',
  ...Object.keys(CURRENCY_BEFORE), ...Object.keys(CURRENCY_AFTER), ...Object.keys(UNITS), ...Object.keys(SCALE_SUFFIXES), ...Object.keys(ABBREVIATIONS),
];

function randomText(seed: number): string {
  let x = (seed * 2654435761) >>> 0;
  const next = () => (x = (Math.imul(x ^ (x >>> 15), 2246822507) + 0x6d2b79f5) >>> 0);
  const n = 1 + (next() % 14);
  let out = '';
  for (let i = 0; i < n; i++) out += PIECES[next() % PIECES.length];
  return out;
}

const SAMPLES = [
  'Xin chào, đây là yêu cầu số +122nyHxRISq1JsN9aYf8A/1052 của bài kiểm tra hiệu năng.',
  'Ngày 2/9/1945, lúc 14h, giá 50k (tăng 5%) – gọi 0912 345 678 hoặc +84 912 345 678.',
  'Thế kỷ XXI, chương IV: nhiệt độ -5°C đến 10°C; COVID-19 & F-16 * _ # | ~ `',
];

test('every gate is sound: on 60,000 generated texts, wherever a gate says no, its rule changes nothing', (t) => {
  const texts = [...SAMPLES];
  for (let seed = 0; seed < 60_000; seed++) texts.push(randomText(seed));
  const ran = new Map<string, number>();
  for (const text of texts) {
    let current = text;
    for (const { name, rule, gate } of GATED_PIPELINE) {
      const next = rule(current);
      if (gate !== null && !gate.test(current) && next !== current) {
        return t.fail(`${name}'s gate skipped a change: ${JSON.stringify(current)} → ${JSON.stringify(next)}`);
      }
      if (next !== current) ran.set(name, (ran.get(name) ?? 0) + 1);
      current = next;
    }
    if (normalizeText(text) !== current) return t.fail(`the gated pipeline differs on ${JSON.stringify(text)}`);
  }
  // The texts reach every rule: a gate that is never put to the test proves nothing.
  for (const { name, gate } of GATED_PIPELINE) {
    if (gate !== null) t.true((ran.get(name) ?? 0) > 50, `${name} changed ${ran.get(name) ?? 0} texts`);
  }
});

test('a plain sentence passes only the gates of what it holds', (t) => {
  const passed = (text: string) => GATED_PIPELINE.filter((s) => s.gate?.test(text)).map((s) => s.name);
  t.deepEqual(passed('Xin chào các bạn.'), []);
  t.deepEqual(passed('Lúc 10:30, giảm 5%.'), ['readTimes', 'readPercentages', 'readRemainingNumbers', 'readSymbols']);
  // The bench's sentence: one number, no date, currency, unit or abbreviation.
  t.deepEqual(passed('Xin chào, đây là yêu cầu số 12345678 của bài kiểm tra hiệu năng.'), ['readRemainingNumbers']);
  t.deepEqual(passed('Ngày 2/9/1945 tại TP.HCM, giá 50.000đ cho 3 kg.'),
    ['expandAbbreviations', 'readPhoneNumbers', 'readDates', 'readCurrencies', 'readUnits', 'readFractions', 'readRemainingNumbers']);
});

test('the hyphen scan reads as the look-behind pattern it replaced, astral letters and lone surrogates included', (t) => {
  const pattern = (text: string) => text.replace(/(?<=\p{L})-(?=\d)|(?<=\d)-(?=\p{L})/gu, ' ');
  const pieces = ['-', '--', 'a', 'Đ', 'é', '1', '9', '𝐀', '𝟕', ' ', '_', '\ud800', '\udc00', 'COVID', 'F'];
  for (const text of generatedStrings(pieces, 100_000, 9, 1)) {
    if (separateCodeHyphens(text) !== pattern(text)) return t.fail(JSON.stringify(text));
  }
  t.is(separateCodeHyphens('COVID-19, F-16, 5-10, a-b, 𝐀-7'), 'COVID 19, F 16, 5-10, a-b, 𝐀 7');
});
