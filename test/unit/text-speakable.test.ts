import test from 'ava';
import { hasSpeakableChunk, hasSpokenChunk, splitChunks } from '../../core/speechkit/text/split.ts';
import { cueOfChunk } from '../../core/speechkit/text/cues.ts';
import { checkText, prepareText } from '../../core/speechkit/text/prepare.ts';

// Pieces that exercise every way a chunk is cut or dropped: sentence ends, commas, long words cut hard
// (letters outside the BMP are two UTF-16 units), cue tags, lone punctuation, zero-width and other blanks.
const PIECES = [
  'a', 'Đ', 'ệ', '7', '𝐀', '𝟕', ' ', '  ', '\n', '\t', '.', '…', '!?', ',', ';', ':', '"', '”', ')', '-', '[cười]', '[thở dài]',
  '[khác]', '\u200b', '\ufeff', '\u0301', '%', '@', 'Mr.', 'e.g.', '\ud800', 'x'.repeat(260), '𝐀'.repeat(140), '.'.repeat(300), ' '.repeat(300),
];

function randomText(seed: number): string {
  let x = seed * 2654435761 >>> 0;
  const next = () => ((x = (Math.imul(x ^ (x >>> 15), 2246822507) + 0x6d2b79f5) >>> 0) % 1_000_003);
  const n = next() % 12;
  let out = '';
  for (let i = 0; i < n; i++) out += PIECES[next() % PIECES.length];
  return out;
}

test('hasSpeakableChunk agrees with splitChunks giving a chunk, on 20,000 generated texts', (t) => {
  for (let seed = 0; seed < 20_000; seed++) {
    const text = randomText(seed);
    if (hasSpeakableChunk(text) !== splitChunks(text).length > 0) return t.fail(`seed ${seed}: ${JSON.stringify(text)}`);
  }
  t.pass();
});

test('checkText gives the verdict prepareText gives, expansion refusals included', (t) => {
  const samples = ['Xin chào 2024', '…', '[cười]', '   ', 'Giá 5% lúc 10:30', '%'.repeat(200), '\u200b\u200b', 'COVID-19 ngày 1/2/2024'];
  for (let seed = 0; seed < 3000; seed++) samples.push(randomText(seed));
  for (const text of samples) {
    let expected: boolean | string;
    let actual: boolean | string;
    try { expected = prepareText(text).chunks.length > 0; } catch (err) { expected = (err as Error).name; }
    try { actual = checkText(text).speakable; } catch (err) { actual = (err as Error).name; }
    if (expected !== actual) return t.fail(JSON.stringify(text));
  }
  t.pass();
});

test('hasSpokenChunk agrees with splitChunks giving a chunk that is not a cue tag, on 20,000 generated texts', (t) => {
  for (let seed = 0; seed < 20_000; seed++) {
    const text = randomText(seed);
    if (hasSpokenChunk(text) !== splitChunks(text).some((chunk) => cueOfChunk(chunk) === null)) return t.fail(`seed ${seed}: ${JSON.stringify(text)}`);
  }
  t.false(hasSpokenChunk('[cười] … [thở dài]'), 'cue tags alone are silence');
  t.true(hasSpokenChunk('[cười] Xin chào'));
});
