import test from 'ava';
import { validateReadableText, nonLatinShare, unreadableReason, isLatinLetterFast, hasVowel, UNSUPPORTED_LANGUAGE, UNREADABLE } from '../../core/speechkit/text/validation.ts';
import { DomainError } from '../../core/errors.ts';
import { toApiError } from '../../core/http/envelopes.ts';
import { generatedStrings } from '../helpers/generated-strings.ts';

const ACCEPTED: Array<[string, string]> = [
  ['plain Vietnamese', 'Xin chào, hôm nay trời đẹp quá.'],
  ['Vietnamese with English words inside', 'Tôi dùng laptop và smartphone mỗi ngày.'],
  ['numbers and punctuation only', '123, 456. 789!'],
  // 33 Latin letters + 17 Cyrillic letters: exactly 34% foreign
  ['exactly 34% foreign letters is still accepted', 'xin chao ban hom nay troi dep lam nhe toan ' + 'привет мир дела хорошо'.slice(0, 20)],
  ['a 30-letter run is accepted', 'a'.repeat(30) + ' xin chào'],
  ['two vowelless 4-letter words are fine (fewer than three word-like tokens)', 'brrr pfft'],
  ['Vietnamese vowels with diacritics count as vowels', 'những người được thưởng'],
  ['punctuation breaks a letter run', 'a'.repeat(20) + '.' + 'a'.repeat(20)],
];

for (const [rule, text] of ACCEPTED) {
  test(`text validation accepts: ${rule}`, (t) => {
    t.notThrows(() => validateReadableText(text));
  });
}

const REFUSED: Array<[string, string, string]> = [
  ['Chinese text', '今天天气很好我们去公园吧', UNSUPPORTED_LANGUAGE],
  ['Russian text', 'Привет как дела сегодня', UNSUPPORTED_LANGUAGE],
  ['more than 34% non-Latin letters', 'xin chào bạn 你好你好你好你好', UNSUPPORTED_LANGUAGE],
  ['an unbroken run of 31 letters', 'a'.repeat(31), UNREADABLE],
  ['keyboard mash', 'asdkjhaskdjhaksjdhaksjdhaksjdhaksjdh', UNREADABLE],
  ['over 60% of 4+-letter tokens without a vowel', 'bcdf ghjk lmnp trvw xin', UNREADABLE],
];

for (const [rule, text, prefix] of REFUSED) {
  test(`text validation refuses (400, message only, no code): ${rule}`, (t) => {
    const err = toApiError(t.throws(() => validateReadableText(text), { instanceOf: DomainError }));
    t.is(err.status, 400);
    t.true((err.messages as string).startsWith(prefix));
    t.is(err.code, undefined);
  });
}

test('Vietnamese letters count as Latin', (t) => {
  t.is(nonLatinShare('Đường phố Hà Nội ồn ào'), 0);
});

test('the vowel rule needs at least three word-like tokens', (t) => {
  t.is(unreadableReason('bcdf ghjk'), null);
  t.is(unreadableReason('bcdf ghjk lmnp'), 'no_vowels');
});

test('the fast letter check agrees with the Unicode properties on every code point it settles (all of the BMP)', (t) => {
  const letter = /\p{L}/u;
  const latin = /\p{Script=Latin}/u;
  let settled = 0;
  for (let code = 0; code < 0x10000; code++) {
    if (code >= 0xd800 && code <= 0xdfff) continue;
    const fast = isLatinLetterFast(code);
    if (fast === null) continue;
    settled++;
    const ch = String.fromCharCode(code);
    const expected = letter.test(ch) ? (latin.test(ch) ? true : 'foreign') : false;
    if (fast !== expected) return t.fail(`U+${code.toString(16)}: fast ${fast}, properties ${expected}`);
  }
  t.is(settled, 128 + (0x250 - 0xc0 - 2) + 0x100, "ASCII, Latin-1 letters, Extended-A and -B, Extended Additional");
});

test('the vowel check with its table agrees with the diacritic-stripping rule: every BMP letter, and 50,000 generated words', (t) => {
  const vowel = /[aeiouy]/;
  const rule = (word: string) => vowel.test(word.toLowerCase()) || vowel.test(word.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase());
  const letters: string[] = [];
  for (let code = 0; code < 0x10000; code++) {
    const ch = String.fromCharCode(code);
    if (/\p{L}/u.test(ch)) letters.push(ch);
  }
  for (const ch of letters) if (hasVowel(ch) !== rule(ch)) return t.fail(`U+${ch.charCodeAt(0).toString(16)}`);
  // Words mixing Vietnamese letters with ones outside the table's blocks (Kelvin sign, Greek, Cyrillic, astral).
  const pieces = ['b', 'c', 'đ', 'ă', 'ơ', 'ư', 'ắ', 'ỹ', 'Ý', 'n', 'g', 'h', 'İ', '\u212a', '\u212b', 'ß', 'ω', 'я', '𝐀', 'x', 'q'];
  for (const word of generatedStrings(pieces, 50_000, 6, 7)) {
    if (hasVowel(word) !== rule(word)) return t.fail(JSON.stringify(word));
  }
  t.pass();
});
