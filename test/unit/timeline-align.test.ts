import test from 'ava';
import { DEFAULT_MAX_TEMPO, placeInSlot } from '../../core/speechkit/timeline/align.ts';
import { speechBounds, speechSpans, trimSilence } from '../../core/speechkit/timeline/activity.ts';
import { TimelineWriter } from '../../core/speechkit/timeline/writer.ts';
import { changeTempo } from '../../core/speechkit/timeline/tempo.ts';
import { PassThrough } from 'node:stream';

test('speech that fits its cue plays at normal tempo from the cue start', (t) => {
  t.deepEqual(placeInSlot({ start: 2, end: 5, nextStart: 6, speechSeconds: 2.5 }), { start: 2, tempo: 1, seconds: 2.5, overflow: 0, cut: 0 });
});

test('speech longer than its cue is sped up just enough, up to the documented limit (1.5)', (t) => {
  t.is(DEFAULT_MAX_TEMPO, 1.5);
  const fits = placeInSlot({ start: 0, end: 2, nextStart: 3, speechSeconds: 2.4 });
  t.is(fits.tempo, 1.2);
  t.is(fits.overflow, 0);
  const over = placeInSlot({ start: 0, end: 2, nextStart: 4, speechSeconds: 4.5 });
  t.is(over.tempo, 1.5);
  t.is(over.seconds, 3);
  t.is(over.overflow, 1, 'then it runs into the gap');
  t.is(over.cut, 0);
});

test('speech never runs past the next cue\'s start: the rest is cut and reported', (t) => {
  const p = placeInSlot({ start: 0, end: 1, nextStart: 1.5, speechSeconds: 3 });
  t.is(p.tempo, 1.5);
  t.is(p.seconds, 1.5);
  t.is(p.overflow, 0.5);
  t.is(p.cut, 0.5);
  const overlapping = placeInSlot({ start: 0, end: 3, nextStart: 1, speechSeconds: 1.2 });
  t.true(overlapping.seconds <= 1, 'a cue overlapping the next owns only the time until it starts');
  const last = placeInSlot({ start: 10, end: 11, nextStart: null, speechSeconds: 3 });
  t.is(last.cut, 0, 'the last cue may run on');
  t.is(last.seconds, 2);
});

function tone(seconds: number, rate: number, amplitude = 0.3): Buffer {
  const n = Math.round(seconds * rate);
  const out = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) out.writeInt16LE(Math.round(Math.sin((2 * Math.PI * 220 * i) / rate) * amplitude * 32767), i * 2);
  return out;
}
const silenceOf = (seconds: number, rate: number) => Buffer.alloc(Math.round(seconds * rate) * 2);

test('silence around a clip is trimmed; speech spans split at pauses', (t) => {
  const rate = 16000;
  const clip = Buffer.concat([silenceOf(0.2, rate), tone(1, rate), silenceOf(0.5, rate), tone(0.5, rate), silenceOf(0.1, rate)]);
  const bounds = speechBounds(clip, rate)!;
  t.true(Math.abs(bounds.start / rate - 0.2) <= 0.01);
  t.true(Math.abs(bounds.end / rate - 2.2) <= 0.01);
  t.true(Math.abs(trimSilence(clip, rate).length / 2 / rate - 2.0) <= 0.02);
  const spans = speechSpans(clip, rate);
  t.is(spans.length, 2);
  t.true(Math.abs(spans[1].start / rate - 1.7) <= 0.01);
  t.is(speechBounds(silenceOf(1, rate), rate), null);
  const long = speechSpans(tone(7, rate), rate, { maxSpanSeconds: 3 });
  t.true(long.length >= 3 && long.every((s) => (s.end - s.start) / rate <= 3));
});

test('the timeline pads gaps with silence and refuses to overlap what is written', async (t) => {
  const out = new PassThrough();
  const parts: Buffer[] = [];
  out.on('data', (c: Buffer) => parts.push(c));
  const timeline = new TimelineWriter(out, 1000);
  await timeline.place(100, Buffer.alloc(20, 1));
  await timeline.append(Buffer.alloc(10, 2));
  await t.throwsAsync(() => timeline.place(105, Buffer.alloc(2)), { instanceOf: RangeError });
  await timeline.padTo(200);
  t.is(timeline.samples, 200);
  const all = Buffer.concat(parts);
  t.is(all.length, 400);
  t.is(all[199], 0);
  t.is(all[200], 1);
});

test('atempo changes length by the tempo and keeps the pitch', async (t) => {
  const rate = 48000;
  const input = tone(2, rate);
  const faster = await changeTempo(input, rate, 1.5);
  t.true(Math.abs(faster.length / 2 / rate - 2 / 1.5) <= 0.03, `${faster.length / 2 / rate}s`);
  // Zero crossings per second stay those of a 220 Hz tone.
  let crossings = 0;
  const mid = faster.subarray(rate, rate * 2);
  for (let i = 2; i < mid.length; i += 2) if ((mid.readInt16LE(i - 2) < 0) !== (mid.readInt16LE(i) < 0)) crossings++;
  t.true(Math.abs(crossings / 2 / ((mid.length / 2) / rate) - 220) <= 10);
  t.is(await changeTempo(input, rate, 1), input);
});
