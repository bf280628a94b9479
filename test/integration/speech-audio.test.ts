import test from 'ava';
import type { TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait.ts';
import { probeAudio, speechSecondsRange, type RawAudio } from '../helpers/audio-probe.ts';
import { priceOf, remainingTokens, startSpeechPlatform } from '../helpers/speech.ts';

const TEXT = 'Xin chào các bạn, hôm nay trời đẹp quá và mọi người đều vui vẻ.';
const RATES = [8000, 16000, 22050, 24000, 44100, 48000];

let p: TestPlatform;
let key: string;
test.before(async () => {
  p = await startSpeechPlatform({ MODERATION_TERMS: 'ma túy' });
  key = (await p.bootstrap()).apiKey;
});
test.after.always(async () => {
  await p?.stop();
});

const speech = (json: Record<string, unknown>, apiKey: string | null = key) => p.api('/audio/speech', { method: 'POST', key: apiKey, json });

const EXPECTED: Record<string, { contentType: string; codec: string; raw?: RawAudio['format'] }> = {
  mp3: { contentType: 'audio/mpeg', codec: 'mp3' },
  wav: { contentType: 'audio/wav', codec: 'pcm_s16le' },
  opus: { contentType: 'audio/ogg', codec: 'opus' },
  pcm: { contentType: 'application/octet-stream', codec: 'pcm_s16le', raw: 's16le' },
  ulaw: { contentType: 'audio/basic', codec: 'pcm_mulaw', raw: 'mulaw' },
};

async function decoded(res: Response, format: string) {
  const bytes = Buffer.from(await res.arrayBuffer());
  const raw = EXPECTED[format].raw;
  const rate = Number(res.headers.get('x-sample-rate'));
  return { bytes, probed: await probeAudio(bytes, raw ? { format: raw, sampleRate: rate } : undefined) };
}

function checkDuration(t: import('ava').ExecutionContext, seconds: number, text = TEXT) {
  const { min, max } = speechSecondsRange(text);
  t.true(seconds >= min && seconds <= max, `${seconds} s outside ${min}..${max}`);
}

const formats: Array<[string, number]> = [['mp3', 48000], ['wav', 48000], ['opus', 48000], ['pcm', 24000], ['ulaw', 8000]];
for (const [format, rate] of formats) {
  test(`response_format ${format}: content type per SPEC, decodes as ${EXPECTED[format].codec} mono at ${rate} Hz with a duration that fits the text`, async (t) => {
    const res = await speech({ model: 'tts-1', input: TEXT, voice: 'vi-north-female-mai', response_format: format });
    t.is(res.status, 200);
    t.is(res.headers.get('content-type'), EXPECTED[format].contentType);
    t.is(res.headers.get('x-sample-rate'), format === 'pcm' || format === 'ulaw' ? String(rate) : null);
    const { probed } = await decoded(res, format);
    t.like(probed, { codec: EXPECTED[format].codec, sampleRate: rate, channels: 1 });
    checkDuration(t, probed.duration);
  });
}

for (const format of ['wav', 'mp3', 'pcm']) {
  for (const rate of RATES) {
    test(`${format} at sample_rate ${rate} decodes at exactly that rate`, async (t) => {
      const res = await speech({ input: 'Một hai ba bốn năm sáu bảy tám.', response_format: format, sample_rate: rate });
      t.is(res.status, 200);
      const { probed } = await decoded(res, format);
      t.like(probed, { codec: EXPECTED[format].codec, sampleRate: rate, channels: 1 });
      checkDuration(t, probed.duration, 'Một hai ba bốn năm sáu bảy tám.');
    });
  }
}

test('no response_format: mp3 at 48000 Hz', async (t) => {
  const res = await speech({ input: TEXT });
  t.is(res.headers.get('content-type'), 'audio/mpeg');
  t.like((await decoded(res, 'mp3')).probed, { codec: 'mp3', sampleRate: 48000 });
});

test('speed 0.25..4.0 is accepted and clamped to 0.5..2.0 (never an error)', async (t) => {
  const seconds = async (speed: number) => (await decoded(await speech({ input: TEXT, response_format: 'pcm', speed }), 'pcm')).probed.duration;
  const [quarter, half, one, two, four] = await Promise.all([0.25, 0.5, 1, 2, 4].map(seconds));
  t.true(Math.abs(quarter - half) < 0.05, `${quarter} vs ${half}`);
  t.true(Math.abs(four - two) < 0.05, `${four} vs ${two}`);
  t.true(half > one * 1.4 && two < one * 0.7, `${half} ${one} ${two}`);
});

test('every compatible model name works; other names are ignored; engine wins over model', async (t) => {
  for (const model of ['tts-1', 'tts-1-hd', 'gpt-4o-mini-tts', 'service', 'service-v4', 'vieneu', 'vieneu-v4', 'whisper-1']) {
    t.is((await speech({ model, input: 'Xin chào.', response_format: 'pcm' })).status, 200, model);
  }
  t.is((await speech({ model: 'service-v3', engine: 'v4', input: 'Xin chào.', response_format: 'pcm' })).status, 200);
});

test('voice by id or display name; the compatible API\'s own voice names are not mapped; clone_ ids are 400', async (t) => {
  const byName = await speech({ input: TEXT, voice: 'Lan', response_format: 'pcm' });
  const byId = await speech({ input: TEXT, voice: 'vi-south-female-lan', response_format: 'pcm' });
  t.deepEqual(Buffer.from(await byName.arrayBuffer()), Buffer.from(await byId.arrayBuffer()));
  const alloy = await speech({ input: TEXT, voice: 'alloy' });
  t.is(alloy.status, 400);
  t.is((await alloy.json()).error.param, 'voice');
  const clone = await speech({ input: TEXT, voice: 'clone_0b7c2b5e-4a7d-4d7e-9a51-1f3c1f0e2a11' });
  t.is(clone.status, 400);
  t.regex((await clone.json()).error.message, /Cloned voices cannot be used on this route/);
});

test('instructions and emotion are accepted and ignored: the audio is the same', async (t) => {
  const plain = Buffer.from(await (await speech({ input: TEXT, response_format: 'pcm' })).arrayBuffer());
  const styled = Buffer.from(await (await speech({ input: TEXT, response_format: 'pcm', instructions: 'Speak cheerfully', emotion: 'storytelling' })).arrayBuffer());
  t.deepEqual(styled, plain);
});

test('400s in the compatible envelope: missing input, aac, flac, conflicting sample_rate, stream_format with a non-streamable format', async (t) => {
  const cases: Array<[Record<string, unknown>, string, RegExp]> = [
    [{}, 'input', /input is required/],
    [{ input: '' }, 'input', /must not be empty/],
    [{ input: TEXT, response_format: 'aac' }, 'response_format', /aac is not supported/],
    [{ input: TEXT, response_format: 'flac' }, 'response_format', /flac is not supported/],
    [{ input: TEXT, response_format: 'opus', sample_rate: 24000 }, 'sample_rate', /always 48000/],
    [{ input: TEXT, response_format: 'ulaw', sample_rate: 16000 }, 'sample_rate', /always 8000/],
    [{ input: TEXT, response_format: 'mp3', stream_format: 'audio' }, 'stream_format', /pcm or ulaw/],
    [{ input: TEXT, stream_format: 'sse' }, 'stream_format', /pcm or ulaw/],
    [{ input: TEXT, response_format: 'wav', stream_format: 'sse' }, 'stream_format', /pcm or ulaw/],
    [{ input: TEXT, model: 'service-v3' }, 'model', /retired/],
    [{ input: TEXT, model: 'service-v7' }, 'model', /does not exist/],
    [{ input: TEXT, engine: 'v3' }, 'engine', /retired on 2026-09-24/],
  ];
  const { apiKey } = await p.bootstrap();
  const before = await remainingTokens(p, apiKey);
  for (const [json, param, message] of cases) {
    const res = await speech(json, apiKey);
    t.is(res.status, 400, JSON.stringify(json));
    const body = await res.json();
    t.deepEqual(Object.keys(body), ['error']);
    t.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type']);
    t.like(body.error, { type: 'invalid_request_error', param, code: null });
    t.regex(body.error.message, message);
  }
  t.is(await remainingTokens(p, apiKey), before, 'requests refused with 4xx are not billed');
});

test('compatible envelope types: 401 authentication_error, 403 insufficient_quota, 422 content_policy_violation; never a trace id', async (t) => {
  const check = async (res: Response, status: number, type: string) => {
    t.is(res.status, status);
    const text = await res.text();
    const body = JSON.parse(text);
    t.like(body.error, { type, code: null });
    t.is(typeof body.error.message, 'string');
    t.false(/traceId|trace_id/.test(text));
    t.false(text.includes(res.headers.get('x-request-id')!), 'X-Request-Id is a header only');
  };
  await check(await speech({ input: TEXT }, null), 401, 'authentication_error');
  await check(await speech({ input: TEXT }, 'vn_sk_' + 'A'.repeat(32)), 401, 'authentication_error');
  const poor = await p.bootstrap({ grant: { totalTokens: 100 } });
  await check(await speech({ input: TEXT }, poor.apiKey), 403, 'insufficient_quota');
  await check(await speech({ input: 'Tin tức về ma túy hôm nay.', aiRefine: true }), 422, 'content_policy_violation');
});

test('moderation runs only with aiRefine; aiRefine adds a surcharge', async (t) => {
  const { apiKey } = await p.bootstrap();
  const text = 'Tin tức về ma túy hôm nay.';
  const start = await remainingTokens(p, apiKey);
  t.is((await speech({ input: text, response_format: 'pcm' }, apiKey)).status, 200);
  const afterPlain = await remainingTokens(p, apiKey);
  t.is(start - afterPlain, priceOf(text));
  t.is((await speech({ input: 'Xin chào buổi sáng.', response_format: 'pcm', aiRefine: true }, apiKey)).status, 200);
  t.true(afterPlain - (await remainingTokens(p, apiKey)) > priceOf('Xin chào buổi sáng.'));
});

test('a success is charged characters x 3 x 1.3 (at least 50 characters)', async (t) => {
  const { apiKey } = await p.bootstrap();
  const before = await remainingTokens(p, apiKey);
  const res = await speech({ input: TEXT, response_format: 'wav' }, apiKey);
  await res.arrayBuffer();
  t.is(before - (await remainingTokens(p, apiKey)), priceOf(TEXT));
});

test('text validations do not run on this route: a long unbroken letter run is spoken', async (t) => {
  const res = await speech({ input: `Xin chào ${'a'.repeat(40)}.`, response_format: 'pcm' });
  t.is(res.status, 200);
});

test('a test key is capped at 100 words (400); 100 words pass', async (t) => {
  const { apiKey } = await p.bootstrap({ kind: 'test' });
  const words = (n: number) => Array.from({ length: n }, () => 'một').join(' ');
  const over = await speech({ input: words(101), response_format: 'ulaw' }, apiKey);
  t.is(over.status, 400);
  t.like((await over.json()).error, { type: 'invalid_request_error', param: 'input' });
  const atCap = await speech({ input: words(100), response_format: 'ulaw' }, apiKey);
  t.is(atCap.status, 200);
  await atCap.arrayBuffer();
});

test('X-Service-Job-Id: GET /tts/<id> answers completed with a URL that downloads the same bytes', async (t) => {
  const res = await speech({ input: TEXT, response_format: 'mp3' });
  const jobId = res.headers.get('x-service-job-id');
  t.regex(jobId ?? '', /^job_/);
  const bytes = Buffer.from(await res.arrayBuffer());
  const job = await waitFor(async () => {
    const body = await (await p.api(`/tts/${jobId}`, { key })).json();
    return body.status === 'completed' ? body : null;
  }, { what: 'saved copy to complete' });
  t.is(job.jobId, jobId);
  t.is(job.textLength, [...TEXT].length);
  t.true(job.duration > 0);
  const download = await fetch(job.audioUrl);
  t.is(download.status, 200);
  t.is(download.headers.get('content-type'), 'audio/mpeg');
  t.deepEqual(Buffer.from(await download.arrayBuffer()), bytes);
  const stranger = await p.bootstrap();
  t.is((await p.api(`/tts/${jobId}`, { key: stranger.apiKey })).status, 404, 'copies are scoped to the owner');
});

test('stream_format audio: the same bytes arrive chunked, with no saved copy', async (t) => {
  const whole = await speech({ input: TEXT, response_format: 'pcm' });
  const streamed = await speech({ input: TEXT, response_format: 'pcm', stream_format: 'audio' });
  t.is(streamed.headers.get('transfer-encoding'), 'chunked');
  t.is(streamed.headers.get('x-sample-rate'), '24000');
  t.is(streamed.headers.get('x-service-job-id'), null);
  t.deepEqual(Buffer.from(await streamed.arrayBuffer()), Buffer.from(await whole.arrayBuffer()));
});

test('stream_format sse: text/event-stream deltas of base64 audio, then exactly one speech.audio.done', async (t) => {
  const whole = Buffer.from(await (await speech({ input: TEXT, response_format: 'ulaw' })).arrayBuffer());
  const res = await speech({ input: TEXT, response_format: 'ulaw', stream_format: 'sse' });
  t.is(res.status, 200);
  t.is(res.headers.get('content-type'), 'text/event-stream');
  t.is(res.headers.get('x-sample-rate'), '8000');
  const events = (await res.text()).split('\n\n').filter(Boolean).map((block) => {
    t.true(block.startsWith('data: '));
    return JSON.parse(block.slice(6));
  });
  const types = events.map((e) => e.type);
  t.true(types.length >= 2);
  t.deepEqual(types.slice(0, -1).filter((type) => type !== 'speech.audio.delta'), []);
  t.is(types.at(-1), 'speech.audio.done');
  const audio = Buffer.concat(events.filter((e) => e.type === 'speech.audio.delta').map((e) => Buffer.from(e.audio, 'base64')));
  t.deepEqual(audio, whole);
});

test('the outcome event reaches usage with characters, audio seconds, generation time, voice, voice name and engine', async (t) => {
  const { apiKey } = await p.bootstrap();
  const res = await speech({ input: TEXT, voice: 'Minh', response_format: 'pcm' }, apiKey);
  const seconds = (await res.arrayBuffer()).byteLength / 2 / 24000;
  const usage = await waitFor(async () => {
    const body = await (await p.api('/usage', { key: apiKey })).json();
    return body.totals?.requests === 1 ? body : null;
  }, { what: 'usage to show the request' });
  t.like(usage.totals, { ok: 1, characters: [...TEXT].length, tokenCost: priceOf(TEXT) });
  t.true(Math.abs(usage.totals.audioSeconds - seconds) < 0.01);
  t.true(usage.totals.avgGenMs > 0);
  t.like(usage.byRoute[0], { route: 'audio_speech', ok: 1 });
  t.like(usage.byVoice[0], { voice: 'vi-north-male-minh', voiceName: 'Minh', engine: 'v4' });
});

test('a whole WAV carries its true RIFF and data sizes and a Content-Length, and so does its saved copy', async (t) => {
  const res = await speech({ input: TEXT, response_format: 'wav', sample_rate: 16000 });
  t.is(res.status, 200);
  const bytes = Buffer.from(await res.arrayBuffer());
  t.is(Number(res.headers.get('content-length')), bytes.length);
  const check = (wav: Buffer, what: string) => {
    t.is(wav.toString('ascii', 0, 4), 'RIFF', what);
    t.is(wav.readUInt32LE(4), wav.length - 8, `${what}: RIFF size is the file less 8 bytes`);
    t.is(wav.toString('ascii', 36, 40), 'data', what);
    t.is(wav.readUInt32LE(40), wav.length - 44, `${what}: data size is every sample byte`);
    t.is(wav.readUInt32LE(24), 16000, what);
  };
  check(bytes, 'response');
  t.true(bytes.length > 44 + 16000, 'about a second of audio or more');
  const jobId = res.headers.get('x-service-job-id');
  const job = await waitFor(async () => {
    const body = await (await p.api(`/tts/${jobId}`, { key })).json();
    return body.status === 'completed' ? body : null;
  }, { what: 'the saved copy' });
  const copy = Buffer.from(await (await fetch(job.audioUrl)).arrayBuffer());
  check(copy, 'saved copy');
  t.deepEqual(copy, bytes);
  t.is(job.duration, (bytes.length - 44) / 2 / 16000);
});
