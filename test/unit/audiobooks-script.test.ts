import test from 'ava';
import { audibleGaps, packLine, planParts, scriptUnits, SILENCE, type ScriptSegment } from '../../plugins/audiobooks/script.ts';
import { trimSilence } from '../../plugins/audiobooks/render/trim.ts';
import { speaks } from '../../plugins/audiobooks/render/part.ts';

const seg = (text: string, speaker: string | null = null, sceneBreak = false): ScriptSegment => ({ text, speaker, sceneBreak });

test('SPEC silences: 2.5 s after the chapter title, 0.6 s between paragraphs and lines, 2 s at a scene change', (t) => {
  const units = scriptUnits('Chương một', [
    seg('Đoạn đầu.\nDòng thứ hai.'),
    seg('Chào chị!', 'Lan'),
    seg('Cảnh mới bắt đầu.', null, true),
  ], 1000);
  t.deepEqual(units.map((u) => [u.text, u.speaker, u.gapBefore, u.segment]), [
    ['Chương một', null, 0, null],
    ['Đoạn đầu.', null, SILENCE.afterTitle, 0],
    ['Dòng thứ hai.', null, SILENCE.paragraph, 0],
    ['Chào chị!', 'Lan', SILENCE.paragraph, 1],
    ['Cảnh mới bắt đầu.', null, SILENCE.sceneChange, 2],
  ]);
  t.is(SILENCE.fileStart, 0.5);
  t.is(SILENCE.fileEnd, 3.5);
});

test('a scene change on the first segment still follows the title by 2.5 s; blank lines are not read', (t) => {
  const units = scriptUnits('Tựa', [seg('\n\nMở đầu.\n\n', null, true)], 1000);
  t.deepEqual(units.map((u) => [u.text, u.gapBefore]), [['Tựa', 0], ['Mở đầu.', 2.5]]);
});

test('a unit with nothing to speak adds no silence of its own: its gap moves to the next spoken unit (the longer kept), and an unspoken title leaves only the lead-in; the plan is unchanged', (t) => {
  const script = [seg('Trước dấu sao.\n* * *\nSau dấu sao.'), seg('***', null, true), seg('Cảnh mới.'), seg('Lan cười.\n* * *')];
  const planned = scriptUnits('Chương một', script, 1000);
  const heard = audibleGaps(planned, speaks);
  t.deepEqual(heard.map((u) => [u.text, u.gapBefore]), [
    ['Chương một', 0],
    ['Trước dấu sao.', SILENCE.afterTitle],
    ['* * *', 0],
    ['Sau dấu sao.', SILENCE.paragraph],
    ['***', 0],
    ['Cảnh mới.', SILENCE.sceneChange],
    ['Lan cười.', SILENCE.paragraph],
    ['* * *', 0],
  ]);
  t.deepEqual(planParts(heard, 1000), planParts(planned, 1000), 'the same units, so finished parts stay valid');
  const untitled = audibleGaps(scriptUnits('* * *', [seg('Mở đầu.'), seg('Tiếp.')], 1000), speaks);
  t.deepEqual(untitled.map((u) => u.gapBefore), [0, 0, SILENCE.paragraph], 'no 2.5 s after a title nobody hears');
});

test('a line longer than a part is cut at sentence ends, then at spaces, never losing a word', (t) => {
  const line = 'Câu thứ nhất rất ngắn. Câu thứ hai cũng ngắn thôi! Và câu cuối cùng thì dài hơn một chút so với những câu trước?';
  const pieces = packLine(line, 40);
  t.true(pieces.every((p) => p.length <= 40), pieces.join(' | '));
  t.is(pieces.join(' '), line);
  t.deepEqual(packLine('ngắn', 40), ['ngắn']);
  const words = packLine('một hai ba bốn năm sáu bảy tám chín mười', 9);
  t.true(words.every((p) => p.length <= 9));
  t.is(words.join(' '), 'một hai ba bốn năm sáu bảy tám chín mười');
  t.deepEqual(packLine('aaaaaaaaaa', 4), ['aaaa', 'aaaa', 'aa'], 'a single longer word is cut hard');
});

test('where a long line is cut at a sentence end, the pieces keep a sentence pause between them (trimming took it away); a cut between words keeps none', (t) => {
  const line = 'Câu thứ nhất rất ngắn. Câu thứ hai cũng ngắn thôi! Và câu cuối cùng thì dài hơn một chút so với những câu trước?';
  const units = scriptUnits('Tựa', [seg(line)], 40);
  t.deepEqual(units.slice(1).map((u) => [u.text, u.gapBefore]), [
    ['Câu thứ nhất rất ngắn.', SILENCE.afterTitle],
    ['Câu thứ hai cũng ngắn thôi! Và câu cuối', SILENCE.sentence],
    ['cùng thì dài hơn một chút so với những', 0],
    ['câu trước?', 0],
  ]);
});

test('parts cover every unit once, in order, each within the part size unless one unit alone is longer', (t) => {
  const segments = Array.from({ length: 30 }, (_, i) => seg(`Đoạn văn số ${i} kể một câu chuyện ngắn về làng quê.`));
  const units = scriptUnits('Chương dài', segments, 120);
  const parts = planParts(units, 120);
  t.true(parts.length > 5);
  t.is(parts[0]!.from, 0);
  t.is(parts.at(-1)!.to, units.length);
  for (let i = 1; i < parts.length; i++) t.is(parts[i]!.from, parts[i - 1]!.to);
  for (const part of parts) {
    const chars = units.slice(part.from, part.to).reduce((n, u) => n + u.text.length, 0);
    t.true(chars <= 120 || part.to - part.from === 1);
  }
  t.deepEqual(planParts(units, 100_000), [{ from: 0, to: units.length }]);
  t.deepEqual(planParts([], 100), []);
});

test('the same script always gives the same plan (finished parts are reused on retry)', (t) => {
  const segments = Array.from({ length: 12 }, (_, i) => seg(`Phần ${i}. Một câu nữa ở đây.`, i % 3 === 0 ? 'Lan' : null, i === 6));
  t.deepEqual(planParts(scriptUnits('Tựa', segments, 60), 60), planParts(scriptUnits('Tựa', [...segments], 60), 60));
});

const pcm = (...samples: number[]) => {
  const b = Buffer.alloc(samples.length * 2);
  samples.forEach((s, i) => b.writeInt16LE(s, i * 2));
  return b;
};

async function collect(chunks: Buffer[]): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const c of trimSilence((async function* () { yield* chunks; })())) out.push(c);
  return Buffer.concat(out);
}

test('the engine\'s own silence before and after a line is trimmed (to 10 ms), silence inside it is kept', async (t) => {
  const quiet = Array.from({ length: 2000 }, () => 3);
  const gap = Array.from({ length: 700 }, () => 0);
  const body = [...pcm(5000, -4000), ...pcm(...gap), ...pcm(3000)];
  const input = [pcm(...quiet), Buffer.from(body.slice(0, 5)), Buffer.from(body.slice(5)), pcm(...quiet)];
  const out = await collect(input);
  // 480 samples (10 ms at 48 kHz) of padding on each side, the gap inside kept whole.
  t.is(out.length, (480 + 2 + 700 + 1 + 480) * 2);
  t.is(out.readInt16LE(480 * 2), 5000);
  t.is(out.readInt16LE((480 + 2 + 700) * 2), 3000);
  t.is((await collect([pcm(...quiet)])).length, 0, 'a silent line gives nothing');
});
