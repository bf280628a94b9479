import test from 'ava';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait.ts';
import { probeAudio } from '../helpers/audio-probe.ts';
import { decodeWav, firstSpeechAfter, speechSecondsBetween, speechWindows, type DecodedWav } from '../helpers/speech-regions.ts';
import { failAfter, silent, tapEngine } from '../helpers/engine-tap.ts';
import { coreServices } from '../../core/services.ts';

let p: TestPlatform;
test.before(async () => {
  p = await startTestPlatform({ PLUGINS: 'catalog,account,srt,usage' });
});
test.after.always(async () => {
  await p?.stop();
});

const price = (chars: number, surcharge = 0) => Math.ceil(Math.round(Math.max(50, chars) * 3.9 * 1e6) / 1e6) + surcharge;
const chars = (texts: string[]) => texts.reduce((n, s) => n + [...s.normalize('NFC')].length, 0);

async function postSrt(key: string, file: Buffer | string | null, fields: Record<string, string> = {}, name = 'subtitles.srt', q: TestPlatform = p) {
  const form = new FormData();
  if (file !== null) form.append('file', new Blob([new Uint8Array(typeof file === 'string' ? Buffer.from(file, 'utf8') : file)]), name);
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const res = await q.api('/srt', { method: 'POST', key, body: form });
  return { res, body: await res.json() };
}

async function download(url: string): Promise<{ bytes: Buffer; wav: DecodedWav }> {
  const res = await fetch(url);
  const bytes = Buffer.from(await res.arrayBuffer());
  return { bytes, wav: decodeWav(bytes) };
}

const remaining = async (key: string) => (await (await p.api('/balance', { key })).json()).totalRemainingTokens;

const CUES = [
  ['00:00:00,500', '00:00:02,500', 'Xin chào các bạn'],
  ['00:00:04,000', '00:00:06,200', 'Hôm nay trời đẹp quá'],
  ['00:00:07,750', '00:00:09,500', 'Chúng ta đi dạo nhé'],
];
const srtOf = (cues: string[][], eol = '\n') => cues.map(([a, b, text], i) => `${i + 1}${eol}${a} --> ${b}${eol}${text}${eol}`).join(eol);
const secondsOf = (ts: string) => {
  const [h, m, rest] = ts.split(':');
  return Number(h) * 3600 + Number(m) * 60 + Number(rest.replace(',', '.'));
};

test('POST /srt: each cue\'s speech starts within 50 ms of its start time; the WAV covers the last cue; billed for the cue text', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  const { res, body } = await postSrt(acct.apiKey, srtOf(CUES), { voiceId: 'vi-south-female-lan' });
  t.is(res.status, 201, JSON.stringify(body));
  t.regex(body.srtId, /^srt_/);
  t.is(body.audioUrlExpiresIn, 86400);
  t.deepEqual(body.cues.map((c: any) => [c.index, c.start, c.end, c.tempo, c.cut]), CUES.map(([a, b], i) => [i + 1, secondsOf(a), secondsOf(b), 1, 0]));
  const { bytes, wav } = await download(body.audioUrl);
  const probed = await probeAudio(bytes);
  t.is(probed.sampleRate, 48000);
  t.true(Math.abs(probed.duration - body.duration) <= 0.01);
  t.true(body.duration >= 9.5, 'covers the last cue');
  body.cues.forEach((cue: any, i: number) => {
    const from = i === 0 ? 0 : body.cues[i - 1].speechEnd + 0.02;
    const onset = firstSpeechAfter(wav, from)!;
    t.true(Math.abs(onset - cue.start) <= 0.05, `cue ${cue.index}: speech at ${onset}s, cue starts ${cue.start}s`);
    t.true(cue.speechSeconds > 0.5);
    t.true(Math.abs(cue.speechEnd - (cue.start + cue.speechSeconds)) <= 0.01);
  });
  t.is(speechSecondsBetween(wav, 0, 0.45), 0, 'silence before the first cue');
  t.is(body.characters, chars(CUES.map((c) => c[2])));
  t.is(await remaining(acct.apiKey), 10_000 - price(body.characters));
});

test('README alignment rule: speech sped up "just enough to fit" ends by its cue\'s end (atempo\'s few extra milliseconds are trimmed, not left past the end)', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 20_000 } });
  const text = 'Giá hôm nay là năm nghìn đồng một cân nhé.';
  // The same speech into shrinking cues, each far from the next: some need a speed-up below the 1.5x cap.
  const ends = [2.6, 2.4, 2.2, 2.0, 1.9, 1.8];
  const ts = (x: number) => `00:00:${x.toFixed(3).padStart(6, '0').replace('.', ',')}`;
  const cues = ends.map((length, i) => [ts(i * 5), ts(i * 5 + length), text]);
  const { res, body } = await postSrt(acct.apiKey, srtOf(cues), { voiceId: 'vi-south-female-lan' });
  t.is(res.status, 201, JSON.stringify(body));
  const fitted = body.cues.filter((c: any) => c.tempo > 1 && c.tempo < 1.5);
  t.true(fitted.length > 0, `no cue needed a speed-up below the cap: ${JSON.stringify(body.cues.map((c: any) => c.tempo))}`);
  for (const cue of fitted) {
    t.is(cue.overflow, 0, `cue ${cue.index}`);
    t.true(cue.speechEnd <= cue.end, `cue ${cue.index}: speech ends ${cue.speechEnd}s, the cue ${cue.end}s`);
  }
  const last = body.cues.at(-1);
  if (last.tempo < 1.5) t.is(body.duration, last.end, 'the file ends with the last cue');
});

test('an over-long cue is sped up (at most 1.5x), runs into the gap, and never overlaps the next cue', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  const long = 'Đây là một câu rất dài được đọc trong một khoảng thời gian rất ngắn';
  const cues = [
    ['00:00:00,000', '00:00:01,000', long],
    ['00:00:06,000', '00:00:07,500', 'Xin chào'],
    ['00:00:08,000', '00:00:08,400', long],
    ['00:00:09,200', '00:00:11,000', 'Tạm biệt'],
  ];
  const { res, body } = await postSrt(acct.apiKey, srtOf(cues));
  t.is(res.status, 201, JSON.stringify(body));
  const [first, second, third, fourth] = body.cues;
  // Cue 1: longer than its 1 s slot even at 1.5x, but the 5 s gap takes the rest.
  t.is(first.tempo, 1.5);
  t.true(first.overflow > 0);
  t.is(first.cut, 0);
  t.true(first.speechEnd < second.start);
  t.true(Math.abs(first.speechEnd - first.speechSeconds / 1.5) <= 0.05, 'the speech is 1.5x shorter');
  // Cue 3: not even the gap is enough: cut at the next cue's start.
  t.is(third.tempo, 1.5);
  t.true(third.cut > 0);
  t.true(third.speechEnd <= fourth.start);
  const { wav } = await download(body.audioUrl);
  // Measured: cue 1's compressed speech ends where reported, then silence until cue 2.
  const windows = speechWindows(wav);
  let lastBefore = 0;
  for (let i = 0; i < Math.floor(second.start / 0.005) - 4; i++) if (windows[i]) lastBefore = (i + 1) * 0.005;
  t.true(Math.abs(lastBefore - first.speechEnd) <= 0.05, `cue 1 speech measured to ${lastBefore}s, reported ${first.speechEnd}s`);
  t.true(lastBefore < second.start, 'cue 1 never reaches cue 2');
  for (const cue of [second, third]) {
    const onset = firstSpeechAfter(wav, cue.start - 0.2)!;
    t.true(Math.abs(onset - cue.start) <= 0.05, `cue ${cue.index} speech at ${onset}s`);
  }
  // Cue 3 runs up to cue 4's start; from there on the file is exactly what cue 4 alone gives.
  t.true(speechSecondsBetween(wav, fourth.start - 0.2, fourth.start - 0.03) > 0.1, 'cue 3 speaks until just before cue 4');
  const without = await postSrt(acct.apiKey, srtOf([cues[0], cues[1], cues[3]]));
  const alone = (await download(without.body.audioUrl)).wav;
  const from = Math.round(fourth.start * 48000);
  t.is(alone.samples.length, wav.samples.length);
  t.deepEqual(wav.samples.subarray(from), alone.samples.subarray(from), 'nothing of cue 3 is heard after cue 4 starts');
  t.true(Math.abs(firstSpeechAfter(alone, fourth.start - 0.5)! - fourth.start) <= 0.05);
});

test('a malformed cue is 400 naming its number; an empty file is 400; a file that is not UTF-8 is 400', async (t) => {
  const acct = await p.bootstrap();
  const before = await remaining(acct.apiKey);
  const bad = `${srtOf(CUES.slice(0, 1))}\n2\n00:00:04,000 -> 00:00:05,000\nHai\n`;
  const malformed = await postSrt(acct.apiKey, bad);
  t.is(malformed.res.status, 400);
  t.is(malformed.body.code, 'SRT_INVALID');
  t.is(malformed.body.cue, 2);
  t.regex(malformed.body.message, /^Cue 2 \(line 6\): the timing/);
  const empty = await postSrt(acct.apiKey, '');
  t.is(empty.res.status, 400);
  t.is(empty.body.code, 'EMPTY_FILE');
  const blank = await postSrt(acct.apiKey, '\r\n\r\n');
  t.is(blank.res.status, 400);
  t.is(blank.body.code, 'SRT_EMPTY');
  const latin1 = await postSrt(acct.apiKey, Buffer.from('1\n00:00:01,000 --> 00:00:02,000\nXin ch\xe0o\n', 'latin1'));
  t.is(latin1.res.status, 400);
  t.regex(latin1.body.message, /UTF-8/);
  const missing = await postSrt(acct.apiKey, null, { voiceId: 'Mai' });
  t.is(missing.res.status, 400);
  t.is(missing.body.code, 'FILE_REQUIRED');
  t.is(await remaining(acct.apiKey), before, 'refusals are not billed');
});

test('a track whose last cue ends past 3 hours (SRT_MAX_SECONDS) is 400 SRT_TOO_LONG naming the cue, before billing and before any audio is written', async (t) => {
  const acct = await p.bootstrap();
  const before = await remaining(acct.apiKey);
  const late = await postSrt(acct.apiKey, srtOf([CUES[0], ['12:30:00,000', '12:30:01,000', 'Xin chào']]));
  t.is(late.res.status, 400);
  t.like(late.body, { code: 'SRT_TOO_LONG', cue: 2 });
  t.regex(late.body.message, /^Cue 2 ends at 12:30:01; a dubbed subtitle track can last at most 03:00:00/);
  t.is(await remaining(acct.apiKey), before);
});

test('a file part sent without its own Content-Type (as Python\'s requests sends files) is read as the file', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  const boundary = 'vieneu-no-part-type';
  const srt = srtOf(CUES.slice(0, 1));
  const part = (headers: string, content: string) => `--${boundary}\r\n${headers}\r\n\r\n${content}\r\n`;
  const body = part('Content-Disposition: form-data; name="file"; filename="subtitles.srt"', srt)
    + part('Content-Disposition: form-data; name="voiceId"', 'vi-south-female-lan')
    + `--${boundary}--\r\n`;
  const res = await p.api('/srt', { method: 'POST', key: acct.apiKey, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body });
  const answer = await res.json();
  t.is(res.status, 201, JSON.stringify(answer));
  t.is(answer.characters, chars([CUES[0]![2]!]));
  // A part with an empty filename and no type is what a browser sends for a file input left empty: still no file.
  const empty = part('Content-Disposition: form-data; name="file"; filename=""', '') + `--${boundary}--\r\n`;
  const none = await p.api('/srt', { method: 'POST', key: acct.apiKey, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body: empty });
  t.like(await none.json(), { code: 'FILE_REQUIRED' });
  t.is(none.status, 400);
});

test('a UTF-8 file with a BOM and CRLF line ends, multi-line cues and <i> tags works', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  const source = '1\r\n00:00:00,200 --> 00:00:02,000\r\n<i>Xin chào</i>\r\ncác bạn\r\n\r\n2\r\n00:00:03,000 --> 00:00:04,500\r\n<b>Tạm biệt</b>\r\n';
  const file = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(source, 'utf8')]);
  const { res, body } = await postSrt(acct.apiKey, file, { aiRefine: 'false', engine: 'v4' });
  t.is(res.status, 201, JSON.stringify(body));
  t.deepEqual(body.cues.map((c: any) => [c.index, c.start, c.end]), [[1, 0.2, 2], [2, 3, 4.5]]);
  t.is(body.characters, chars(['Xin chào các bạn', 'Tạm biệt']), 'tags and line breaks are not billed text');
  const { wav } = await download(body.audioUrl);
  t.true(Math.abs(firstSpeechAfter(wav, 0)! - 0.2) <= 0.05);
  t.true(Math.abs(firstSpeechAfter(wav, body.cues[0].speechEnd + 0.02)! - 3) <= 0.05);
});

test('text validations and voices apply before billing; aiRefine is a form field billed with the surcharge', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  const foreign = await postSrt(acct.apiKey, srtOf([['00:00:01,000', '00:00:03,000', 'これは日本語の字幕です。ベトナム語ではありません。']]));
  t.is(foreign.res.status, 400);
  t.regex(foreign.body.message, /^Text appears to be in an unsupported language/);
  t.is(foreign.body.code, undefined);
  const unknownVoice = await postSrt(acct.apiKey, srtOf(CUES), { voiceId: 'alloy' });
  t.is(unknownVoice.res.status, 400);
  t.is(unknownVoice.body.code, 'VOICE_NOT_FOUND');
  const badField = await postSrt(acct.apiKey, srtOf(CUES), { aiRefine: 'maybe' });
  t.is(badField.res.status, 400);
  t.is(badField.body.code, 'VALIDATION_FAILED');
  t.is(await remaining(acct.apiKey), 10_000);
  const refined = await postSrt(acct.apiKey, srtOf(CUES.slice(0, 1)), { aiRefine: 'true' });
  t.is(refined.res.status, 201);
  const billed = Math.max(50, chars([CUES[0][2]]));
  t.is(await remaining(acct.apiKey), 10_000 - price(billed, Math.ceil(billed * 0.5)));
});

test.serial('a render that fails is refunded (500) and shows as an error of route srt in usage', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  const engine = await p.platform.service(coreServices.engine);
  let calls = 0;
  const tap = tapEngine(engine, (request, real) => (++calls === 2 ? failAfter(0)(request, real) : real(request)));
  try {
    const { res } = await postSrt(acct.apiKey, srtOf(CUES));
    t.is(res.status, 500);
  } finally {
    tap.restore();
  }
  t.is(await remaining(acct.apiKey), 10_000);
  const row = await waitFor(async () => {
    const r = await (await p.api('/usage', { key: acct.apiKey })).json();
    return r.byRoute.find((x: any) => x.route === 'srt');
  }, { timeoutMs: 15_000, what: 'srt usage' });
  t.like(row, { requests: 1, error: 1 });
});

test.serial('SPEC Billing rule 3: a cue with words that the engine renders as no audio at all fails the render (500), refunded, instead of a paid file of silence', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  const engine = await p.platform.service(coreServices.engine);
  let calls = 0;
  // The second cue's run ends normally with zero samples.
  const tap = tapEngine(engine, (request, real) => (++calls === 2 ? silent()(request, real) : real(request)));
  try {
    const { res, body } = await postSrt(acct.apiKey, srtOf(CUES));
    t.is(res.status, 500, JSON.stringify(body));
  } finally {
    tap.restore();
  }
  t.is(await remaining(acct.apiKey), 10_000);
});

test('a cue holding only a cue tag ("[cười]", a laugh written as a pause) is a quiet cue in the file, not a failed render', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  const cues = [CUES[0], ['00:00:03,000', '00:00:03,800', '[cười]'], CUES[1]];
  const { res, body } = await postSrt(acct.apiKey, srtOf(cues));
  t.is(res.status, 201, JSON.stringify(body));
  t.like(body.cues[1], { index: 2, speechSeconds: 0, cut: 0 });
  t.true(body.cues[0].speechSeconds > 0.5 && body.cues[2].speechSeconds > 0.5);
});

test('SPEC Billing 3 / README NOTHING_TO_SPEAK: a subtitle file whose cues are all cue tags alone is 400 NOTHING_TO_SPEAK naming "file", before billing (every engine renders a cue tag as silence)', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  for (const cues of [
    [['00:00:00,000', '00:00:02,000', '[cười]']],
    [['00:00:00,000', '00:00:01,000', '[cười]'], ['00:00:02,000', '00:00:03,000', '[thở dài] ... [hắng giọng]']],
  ]) {
    for (const aiRefine of ['false', 'true']) {
      const { res, body } = await postSrt(acct.apiKey, srtOf(cues), { aiRefine });
      t.is(res.status, 400, JSON.stringify(body));
      t.is(body.code, 'NOTHING_TO_SPEAK');
      t.regex(body.message, /"file" holds only cue tags/);
    }
  }
  t.is(await remaining(acct.apiKey), 10_000, 'nothing billed');
});

test('SPEC Billing 3 (no paid gap): a cue starting at the same time as the one before is 400 SRT_INVALID naming both cues, before billing', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  const { res, body } = await postSrt(acct.apiKey, srtOf([CUES[0], [CUES[0][0], CUES[0][1], 'Chào anh'], CUES[1]]));
  t.is(res.status, 400, JSON.stringify(body));
  t.like(body, { code: 'SRT_INVALID', cue: 2, line: 6 });
  t.regex(body.message, /^Cue 2 \(line 6\): it starts at 00:00:00,500, as cue 1 \(line 2\) does/);
  t.is(await remaining(acct.apiKey), 10_000);
});

test('README /srt "no file 400 FILE_REQUIRED": a subtitle sent as a text field instead of a file part is FILE_REQUIRED saying how to send it, not an unknown field', async (t) => {
  const acct = await p.bootstrap();
  const before = await remaining(acct.apiKey);
  const { res, body } = await postSrt(acct.apiKey, null, { file: srtOf(CUES), voiceId: 'Mai' });
  t.is(res.status, 400, JSON.stringify(body));
  t.is(body.code, 'FILE_REQUIRED');
  t.regex(body.message, /text field.*multipart file field named file/);
  // A file part and a text field of the same name: the extra field is still refused.
  const form = new FormData();
  form.append('file', new Blob([srtOf(CUES)]), 'a.srt');
  form.append('file', 'again');
  const both = await p.api('/srt', { method: 'POST', key: acct.apiKey, body: form });
  t.like(await both.json(), { code: 'VALIDATION_FAILED' });
  t.is(await remaining(acct.apiKey), before);
});

test('POST /srt shares the media rate class (10 a minute per key); GET /engines lists srt only with the plugin', async (t) => {
  const q = await startTestPlatform({ PLUGINS: 'catalog,account,srt', RATE_MEDIA_PER_MINUTE: '2' });
  try {
    const acct = await q.bootstrap();
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await postSrt(acct.apiKey, '', {}, 'a.srt', q)).res.status);
    t.deepEqual(statuses, [400, 400, 429]);
    t.true((await (await q.api('/engines')).json()).engines[0].features.includes('srt'));
  } finally {
    await q.stop();
  }
  t.false((await (await p.api('/engines')).json()).engines[0].features.includes('dialogue'));
});
