import test from 'ava';
import OpenAI from 'openai';
import type { TestPlatform } from '../helpers/platform.ts';
import { probeAudio, speechSecondsRange } from '../helpers/audio-probe.ts';
import { startSpeechPlatform } from '../helpers/speech.ts';

/** The official client, changed only in base URL and key (SPEC: a true drop-in). */
const TEXT = 'Chào mừng bạn đến với dịch vụ chuyển văn bản thành giọng nói tiếng Việt.';

let p: TestPlatform;
let client: OpenAI;
test.before(async () => {
  p = await startSpeechPlatform();
  const { apiKey } = await p.bootstrap();
  client = new OpenAI({ apiKey, baseURL: `${p.url}/api/v1`, maxRetries: 0 });
});
test.after.always(async () => {
  await p?.stop();
});

function fitsText(t: import('ava').ExecutionContext, seconds: number) {
  const { min, max } = speechSecondsRange(TEXT);
  t.true(seconds >= min && seconds <= max, `${seconds} s`);
}

test('openai client: mp3 (the default format)', async (t) => {
  const res = await client.audio.speech.create({ model: 'tts-1', voice: 'vi-north-female-mai', input: TEXT });
  t.is(res.headers.get('content-type'), 'audio/mpeg');
  const probed = await probeAudio(Buffer.from(await res.arrayBuffer()));
  t.like(probed, { codec: 'mp3', sampleRate: 48000, channels: 1 });
  fitsText(t, probed.duration);
});

test('openai client: wav', async (t) => {
  const res = await client.audio.speech.create({ model: 'gpt-4o-mini-tts', voice: 'Hương', input: TEXT, response_format: 'wav', instructions: 'Đọc chậm rãi' });
  const probed = await probeAudio(Buffer.from(await res.arrayBuffer()));
  t.like(probed, { codec: 'pcm_s16le', sampleRate: 48000, channels: 1 });
  fitsText(t, probed.duration);
});

test('openai client: pcm is 24 kHz s16le with X-Sample-Rate', async (t) => {
  const { data, response } = await client.audio.speech.create({ model: 'tts-1-hd', voice: 'vi-south-male-nam', input: TEXT, response_format: 'pcm', speed: 1.25 }).withResponse();
  t.is(response.headers.get('x-sample-rate'), '24000');
  const bytes = Buffer.from(await data.arrayBuffer());
  const probed = await probeAudio(bytes, { format: 's16le', sampleRate: 24000 });
  t.like(probed, { codec: 'pcm_s16le', sampleRate: 24000, channels: 1 });
  t.true(Math.abs(probed.duration - bytes.length / 2 / 24000) < 0.01);
});

test('openai client: streaming audio arrives in several chunks as it is generated', async (t) => {
  const long = `${TEXT} ${TEXT} ${TEXT} ${TEXT}`;
  const body = await client.audio.speech
    .create({ model: 'tts-1', voice: 'vi-north-male-minh', input: long, response_format: 'pcm', stream_format: 'audio' })
    .then((r) => r.body!);
  let chunks = 0;
  let bytes = 0;
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    chunks++;
    bytes += chunk.byteLength;
  }
  t.true(chunks > 1, `${chunks} chunks`);
  const seconds = bytes / 2 / 24000;
  const { min, max } = speechSecondsRange(long);
  t.true(seconds >= min && seconds <= max, `${seconds} s`);
});

test('openai client: stream_format sse ends with exactly one speech.audio.done', async (t) => {
  const res = await client.audio.speech.create({ model: 'tts-1', voice: 'vi-north-female-mai', input: TEXT, response_format: 'pcm', stream_format: 'sse' });
  t.is(res.headers.get('content-type'), 'text/event-stream');
  const events = (await res.text()).split('\n\n').filter(Boolean).map((block) => JSON.parse(block.replace(/^data: /, '')));
  t.is(events.filter((e) => e.type === 'speech.audio.done').length, 1);
  t.is(events.at(-1).type, 'speech.audio.done');
  t.true(events.filter((e) => e.type === 'speech.audio.delta').length >= 1);
});

test('openai client: a 400 raises BadRequestError carrying our message, type and param', async (t) => {
  const err = await t.throwsAsync(client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: TEXT }), { instanceOf: OpenAI.BadRequestError });
  t.is(err!.status, 400);
  t.regex(err!.message, /Unknown voice "alloy"/);
  t.is(err!.type, 'invalid_request_error');
  t.is(err!.param, 'voice');
  t.regex(err!.requestID ?? '', /^[0-9a-f-]{36}$/, 'the SDK finds the request id in X-Request-Id');

  const retired = await t.throwsAsync(client.audio.speech.create({ model: 'service-v3', voice: 'vi-north-female-mai', input: TEXT }), { instanceOf: OpenAI.BadRequestError });
  t.regex(retired!.message, /retired/);
  const format = await t.throwsAsync(client.audio.speech.create({ model: 'tts-1', voice: 'vi-north-female-mai', input: TEXT, response_format: 'aac' }), { instanceOf: OpenAI.BadRequestError });
  t.regex(format!.message, /aac is not supported/);
});

test('openai client: a wrong key raises AuthenticationError', async (t) => {
  const stranger = new OpenAI({ apiKey: 'vn_sk_' + 'B'.repeat(32), baseURL: `${p.url}/api/v1`, maxRetries: 0 });
  await t.throwsAsync(stranger.audio.speech.create({ model: 'tts-1', voice: 'vi-north-female-mai', input: TEXT }), { instanceOf: OpenAI.AuthenticationError });
});

test('a client that sends every optional field as null (not set) gets the defaults, as the drop-in it replaces gives them', async (t) => {
  const { apiKey } = await p.bootstrap();
  const res = await p.api('/audio/speech', {
    method: 'POST', key: apiKey,
    json: { model: null, input: TEXT, voice: null, response_format: null, sample_rate: null, speed: null, instructions: null, stream_format: null, emotion: null, aiRefine: null, engine: null },
  });
  t.is(res.status, 200, await res.clone().text());
  t.is(res.headers.get('content-type'), 'audio/mpeg');
  fitsText(t, (await probeAudio(Buffer.from(await res.arrayBuffer()))).duration);
});
