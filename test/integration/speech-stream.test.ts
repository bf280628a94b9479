import test from 'ava';
import type { TestPlatform } from '../helpers/platform.ts';
import { parseFrameStream } from '../helpers/frames.ts';
import { probeAudio, speechSecondsRange } from '../helpers/audio-probe.ts';
import { SENTENCE, priceOf, remainingTokens, startSpeechPlatform } from '../helpers/speech.ts';

let p: TestPlatform;
test.before(async () => {
  p = await startSpeechPlatform({ MODERATION_TERMS: 'ma túy' });
});
test.after.always(async () => {
  await p?.stop();
});

/** Each test streams on its own account: a grant holds at most 4 open streams and tests run concurrently. */
const stream = (json: Record<string, unknown>, apiKey: string) => p.api('/tts/stream', { method: 'POST', key: apiKey, json });
const newKey = async () => (await p.bootstrap()).apiKey;

function fitsText(t: import('ava').ExecutionContext, seconds: number, text = SENTENCE) {
  const { min, max } = speechSecondsRange(text);
  t.true(seconds >= min && seconds <= max, `${seconds} s outside ${min}..${max}`);
}

test('default stream: self-contained WAV frames at 48000 Hz, terminator, and the documented headers', async (t) => {
  const res = await stream({ text: SENTENCE }, await newKey());
  t.is(res.status, 200);
  t.is(res.headers.get('content-type'), 'application/octet-stream');
  t.is(res.headers.get('x-sample-rate'), '48000');
  t.is(res.headers.get('x-output-format'), 'wav');
  t.is(res.headers.get('x-stream-format'), 'len32-wav-chunks');
  t.is(res.headers.get('x-stream-heartbeat'), '2');
  const parsed = parseFrameStream(Buffer.from(await res.arrayBuffer()));
  t.true(parsed.terminated);
  t.true(parsed.frames.length >= 2, 'one frame per sentence or clause');
  let seconds = 0;
  for (const frame of parsed.frames) {
    const probed = await probeAudio(frame);
    t.like(probed, { codec: 'pcm_s16le', sampleRate: 48000, channels: 1 });
    t.is(frame.readUInt32LE(40), frame.length - 44, 'each frame declares its exact size');
    seconds += probed.duration;
  }
  fitsText(t, seconds);
});

for (const rate of [8000, 16000, 22050, 24000, 44100]) {
  test(`WAV frames at sampleRate ${rate}`, async (t) => {
    const res = await stream({ text: 'Một hai ba. Bốn năm sáu.', sampleRate: rate }, await newKey());
    t.is(res.headers.get('x-sample-rate'), String(rate));
    const parsed = parseFrameStream(Buffer.from(await res.arrayBuffer()));
    t.true(parsed.terminated);
    for (const frame of parsed.frames) t.like(await probeAudio(frame), { codec: 'pcm_s16le', sampleRate: rate, channels: 1 });
  });
}

for (const [format, codec, rate] of [['mp3', 'mp3', 24000], ['opus', 'opus', 48000]] as const) {
  test(`${format} stream: raw codec frames, each a complete file decoded on its own, no heartbeat header`, async (t) => {
    const res = await stream({ text: SENTENCE, outputFormat: format, ...(format === 'mp3' ? { sampleRate: rate } : {}) }, await newKey());
    t.is(res.status, 200);
    t.is(res.headers.get('x-stream-format'), 'len32-frames');
    t.is(res.headers.get('x-output-format'), format);
    t.is(res.headers.get('x-sample-rate'), String(rate));
    t.is(res.headers.get('x-stream-heartbeat'), null);
    const parsed = parseFrameStream(Buffer.from(await res.arrayBuffer()));
    t.true(parsed.terminated);
    t.is(parsed.heartbeats, 0, 'raw codec streams never carry heartbeats');
    let seconds = 0;
    for (const frame of parsed.frames) {
      const probed = await probeAudio(frame);
      t.like(probed, { codec, sampleRate: rate, channels: 1 });
      seconds += probed.duration;
    }
    // Each independently encoded frame carries a little codec padding.
    const { min, max } = speechSecondsRange(SENTENCE);
    t.true(seconds >= min && seconds <= max + parsed.frames.length * 0.1, `${seconds} s`);
  });
}

for (const [format, raw, rate] of [['pcm', 's16le', 48000], ['ulaw', 'mulaw', 8000]] as const) {
  test(`${format} stream: raw frames that join into one decodable stream at ${rate} Hz`, async (t) => {
    const res = await stream({ text: SENTENCE, outputFormat: format }, await newKey());
    t.is(res.headers.get('x-sample-rate'), String(rate));
    t.is(res.headers.get('x-stream-format'), 'len32-frames');
    const parsed = parseFrameStream(Buffer.from(await res.arrayBuffer()));
    t.true(parsed.terminated);
    const probed = await probeAudio(Buffer.concat(parsed.frames), { format: raw, sampleRate: rate });
    t.like(probed, { sampleRate: rate, channels: 1 });
    fitsText(t, probed.duration);
  });
}

test('a successful stream charges the price once: characters x 3 x 1.3', async (t) => {
  const { apiKey } = await p.bootstrap();
  const before = await remainingTokens(p, apiKey);
  const res = await stream({ text: SENTENCE }, apiKey);
  t.true(parseFrameStream(Buffer.from(await res.arrayBuffer())).terminated);
  t.is(before - (await remainingTokens(p, apiKey)), priceOf(SENTENCE));
});

test('voice by display name and emotion values are accepted (emotion is ignored by v4)', async (t) => {
  const key = await newKey();
  const a = await stream({ text: 'Xin chào.', voiceId: 'Hùng', emotion: 'tin_tuc', outputFormat: 'pcm' }, key);
  const b = await stream({ text: 'Xin chào.', voiceId: 'vi-central-male-hung', outputFormat: 'pcm' }, key);
  t.deepEqual(parseFrameStream(Buffer.from(await a.arrayBuffer())).frames, parseFrameStream(Buffer.from(await b.arrayBuffer())).frames);
});

test('an own clone_ voice streams at the catalogue price', async (t) => {
  const { apiKey: key, accountId } = await p.bootstrap();
  const clone = await (await p.admin(`/accounts/${accountId}/clones`, { method: 'POST', json: { name: 'Giọng tôi', baseVoiceId: 'vi-north-male-minh' } })).json();
  const before = await remainingTokens(p, key);
  const res = await stream({ text: 'Xin chào, đây là giọng của tôi.', voiceId: clone.id }, key);
  t.is(res.status, 200);
  t.true(parseFrameStream(Buffer.from(await res.arrayBuffer())).terminated);
  t.true(before - (await remainingTokens(p, key)) >= priceOf('Xin chào, đây là giọng của tôi.'));
});

test('clone rules, all 400 before billing: foreign or missing clone, reference gone, clone on retired v3', async (t) => {
  const mine = await p.bootstrap();
  const other = await p.bootstrap();
  const make = async (accountFor: string, extra: Record<string, unknown>) =>
    (await (await p.admin(`/accounts/${accountFor}/clones`, { method: 'POST', json: { name: 'c', baseVoiceId: 'vi-north-female-mai', ...extra } })).json()).id as string;
  const foreign = await make(other.accountId, {});
  const gone = await make(mine.accountId, { referenceAvailable: false });
  const retired = await make(mine.accountId, { engine: 'v3' });
  const before = await remainingTokens(p, mine.apiKey);
  const refusal = async (voiceId: string) => {
    const res = await stream({ text: 'Xin chào.', voiceId }, mine.apiKey);
    t.is(res.status, 400);
    return res.json();
  };
  t.regex((await refusal(foreign)).message, /not found among your voices/);
  t.regex((await refusal('clone_00000000-0000-0000-0000-000000000000')).message, /not found among your voices/);
  t.regex((await refusal(gone)).message, /no longer available/);
  const v3 = await refusal(retired);
  t.is(v3.code, 'CLONE_ENGINE_RETIRED');
  t.is(v3.engine, 'v3');
  t.is(await remainingTokens(p, mine.apiKey), before);
});

test('400s in the native envelope before billing: retired engine, strict speed, long text, bad format, rate conflict', async (t) => {
  const { apiKey } = await p.bootstrap();
  const before = await remainingTokens(p, apiKey);
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ text: 'Xin chào.', engine: 'v3' }, /retired on 2026-09-24/],
    [{ text: 'Xin chào.', speed: 2.5 }, /speed/],
    [{ text: 'Xin chào.', speed: 0.25 }, /speed/],
    [{ text: 'a'.repeat(50_001) }, /50000/],
    [{ text: 'Xin chào.', outputFormat: 'flac' }, /flac is not supported/],
    [{ text: 'Xin chào.', outputFormat: 'opus', sampleRate: 16000 }, /always 48000/],
    [{ text: 'Xin chào.', outputFormat: 'ulaw', sampleRate: 48000 }, /always 8000/],
    [{ text: 'Xin chào.', emotion: 'angry' }, /emotion/],
    [{ text: 'Xin chào.', voiceId: 'no-such-voice' }, /Unknown voice/],
    [{ text: '... !!!' }, /nothing that can be spoken/],
  ];
  for (const [json, message] of cases) {
    const res = await stream(json, apiKey);
    t.is(res.status, 400, JSON.stringify(json).slice(0, 80));
    const body = await res.json();
    t.is(body.statusCode, 400);
    t.regex(JSON.stringify(body.message), message);
    t.is(body.traceId, res.headers.get('x-request-id'));
  }
  t.is(await remainingTokens(p, apiKey), before);
});

test('a test key is capped at 100 words; aiRefine moderation is 422; text validations do not run', async (t) => {
  const testKey = (await p.bootstrap({ kind: 'test' })).apiKey;
  const over = await stream({ text: Array.from({ length: 101 }, () => 'một').join(' ') }, testKey);
  t.is(over.status, 400);
  t.is((await over.json()).code, 'TEST_KEY_WORD_LIMIT');
  const key = await newKey();
  const refused = await stream({ text: 'Tin tức về ma túy.', aiRefine: true }, key);
  t.is(refused.status, 422);
  const unreadable = await stream({ text: `Xin chào ${'b'.repeat(40)}.`, outputFormat: 'ulaw' }, key);
  t.is(unreadable.status, 200);
  t.true(parseFrameStream(Buffer.from(await unreadable.arrayBuffer())).terminated);
});
