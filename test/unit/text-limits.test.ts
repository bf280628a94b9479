import test from 'ava';
import { countWords, TEST_KEY_MAX_WORDS } from '../../core/speechkit/text/word-cap.ts';
import { capCombiningRuns, hasLongCombiningRun, MAX_COMBINING_RUN } from '../../core/speechkit/text/unicode.ts';
import { expansionLimit, normalizeText, prepareText, TextExpansionError, MAX_EXPANSION } from '../../core/speechkit/text/prepare.ts';
import { readCardinal, parseRoman } from '../../core/speechkit/text/numbers.ts';
import { MAX_NUMBER_RUN } from '../../core/speechkit/text/rules.ts';
import { splitChunks } from '../../core/speechkit/text/split.ts';

const WORDS: Array<[string, number]> = [
  ['xin chào các bạn', 4],
  ['một,hai,ba,bốn', 4],
  ['một.hai.ba', 3],
  ['một-hai-ba', 3],
  ['một/hai/ba', 3],
  ['một\u200Bhai\u200Bba', 3],
  ['một\u2060hai', 2],
  ['một\u00A0hai\u3000ba\tbốn', 4],
  ['một:hai_ba', 3],
  ['giá 50.000đ hay 3,5 USD', 6],
  ['Tie\u0302\u0301ng Vie\u0323\u0302t', 2],
  ['我们是中国人', 3],
  ['- - -', 3],
  ['😀 😀', 2],
  ['', 0],
];

for (const [text, words] of WORDS) {
  test(`test-key words: ${JSON.stringify(text)} counts ${words}`, (t) => {
    t.is(countWords(text), words);
  });
}

test('the word count stops just past the cap: a 50,000-word text is counted no further than needed', (t) => {
  t.is(countWords('chữ,'.repeat(50_000), TEST_KEY_MAX_WORDS), TEST_KEY_MAX_WORDS + 1);
});

test('combining-mark runs longer than 30 are detected and cut to 30 (UAX #15 stream-safe limit)', (t) => {
  const ok = 'a' + '\u0301'.repeat(MAX_COMBINING_RUN);
  const long = 'a' + '\u0301\u0323'.repeat(MAX_COMBINING_RUN);
  t.false(hasLongCombiningRun(ok));
  t.true(hasLongCombiningRun(long));
  t.is(capCombiningRuns(ok), ok);
  t.is(capCombiningRuns(`${long} b`), `a${'\u0301\u0323'.repeat(MAX_COMBINING_RUN / 2)} b`);
});

test('a cardinal of more than 15 digits (in any notation) is read digit by digit', (t) => {
  t.is(readCardinal('1234567890123456'), 'một hai ba bốn năm sáu bảy tám chín không một hai ba bốn năm sáu');
  t.is(normalizeText('1.000.000.000.000.000.000'), 'một không không không không không không không không không không không không không không không không không không');
});

test(`a run of digits and separators longer than ${MAX_NUMBER_RUN} characters is read in groups of four digits`, (t) => {
  t.is(normalizeText('mã 123456789012345678901234567890123'), 'mã một hai ba bốn, năm sáu bảy tám, chín không một hai, ba bốn năm sáu, bảy tám chín không, một hai ba bốn, năm sáu bảy tám, chín không một hai, ba');
  t.is(normalizeText(`${'12.'.repeat(11)}5`), 'một hai, một hai, một hai, một hai, một hai, một hai, một hai, một hai, một hai, một hai, một hai, năm');
  const reading = normalizeText('9'.repeat(50_000));
  t.true(reading.startsWith('chín chín chín chín, chín'));
  t.true(reading.length < 6 * 50_000);
});

test('Roman numerals longer than any well-formed one are not parsed', (t) => {
  t.is(parseRoman('MMMDCCCLXXXVIII'), 3888);
  t.is(parseRoman('M'.repeat(5000)), null);
});

test(`prepared text may be at most ${MAX_EXPANSION} times the billed characters (at least 50)`, (t) => {
  t.is(expansionLimit(10), MAX_EXPANSION * 50);
  t.is(expansionLimit(1000), MAX_EXPANSION * 1000);
  t.notThrows(() => prepareText('%'.repeat(1000), { sourceCharacters: 1000 }));
  const err = t.throws(() => prepareText('%'.repeat(1000), { sourceCharacters: 500 }), { instanceOf: TextExpansionError });
  t.is(err?.limit, 5000);
});

test('long runs of sentence marks, spaces and initials split correctly', (t) => {
  // the run of dots ends one sentence; its unspeakable remainder past the 250-character cut is dropped
  t.deepEqual(splitChunks(`Một${'.'.repeat(50_000)} Hai.`), [`Một${'.'.repeat(247)}`, 'Hai.']);
  t.deepEqual(splitChunks(`A. B. C. Nguyễn đến.`), ['A. B. C. Nguyễn đến.']);
  const chunks = splitChunks('chữ '.repeat(20_000));
  t.true(chunks.every((c) => c.length <= 250));
  t.is(chunks.join(' ').split(' ').length, 20_000);
});
