import test from 'ava';
import type { TestPlatform } from '../helpers/platform.ts';
import { probeAudio, speechSecondsRange } from '../helpers/audio-probe.ts';
import { priceOf, remainingTokens, startSpeechPlatform } from '../helpers/speech.ts';

const TEXT = 'Dạ, em chào anh. Em có thể giúp gì cho anh hôm nay ạ?';
const voiceRequest = (sampleRate: number, text = TEXT) => ({ message: { type: 'voice-request', text, sampleRate, timestamp: 1767225600000 }, call: { id: 'call_1' } });

let p: TestPlatform;
test.before(async () => {
  p = await startSpeechPlatform({ MODERATION_TERMS: 'ma túy' });
});
test.after.always(async () => {
  await p?.stop();
});

/** The voice-agent platform sends its configured secret in X-AGENT-SECRET. */
const agent = (json: unknown, headers: Record<string, string>, query = '') =>
  p.api(`/agent/speech${query}`, { method: 'POST', json, headers });

for (const rate of [8000, 16000, 22050, 24000]) {
  test(`sampleRate ${rate}: raw mono s16le PCM at exactly that rate, no header`, async (t) => {
    const { apiKey } = await p.bootstrap();
    const res = await agent(voiceRequest(rate), { 'x-agent-secret': apiKey });
    t.is(res.status, 200);
    t.is(res.headers.get('content-type'), 'application/octet-stream');
    t.is(res.headers.get('x-sample-rate'), String(rate));
    const bytes = Buffer.from(await res.arrayBuffer());
    t.is(bytes.length % 2, 0);
    t.not(bytes.toString('ascii', 0, 4), 'RIFF');
    const probed = await probeAudio(bytes, { format: 's16le', sampleRate: rate });
    t.like(probed, { codec: 'pcm_s16le', sampleRate: rate, channels: 1 });
    const { min, max } = speechSecondsRange(TEXT);
    t.true(probed.duration >= min && probed.duration <= max, `${probed.duration} s`);
  });
}

test('the same audio at every rate: durations agree', async (t) => {
  const { apiKey } = await p.bootstrap();
  const seconds = await Promise.all([8000, 24000].map(async (rate) => {
    const res = await agent(voiceRequest(rate), { 'x-agent-secret': apiKey });
    return (await res.arrayBuffer()).byteLength / 2 / rate;
  }));
  t.true(Math.abs(seconds[0] - seconds[1]) < 0.01, `${seconds}`);
});

test('the key is accepted in X-AGENT-SECRET, Authorization or X-API-Key; a wrong or missing one is 401; two at once is 400', async (t) => {
  const { apiKey } = await p.bootstrap();
  for (const headers of [{ 'x-agent-secret': apiKey }, { authorization: `Bearer ${apiKey}` }, { 'x-api-key': apiKey }] as Array<Record<string, string>>) {
    const res = await agent(voiceRequest(16000), headers);
    t.is(res.status, 200, Object.keys(headers)[0]);
    await res.arrayBuffer();
  }
  t.is((await agent(voiceRequest(16000), { 'x-agent-secret': 'vn_sk_' + 'C'.repeat(32) })).status, 401);
  const missing = await agent(voiceRequest(16000), { 'x-agent-secret': '' });
  t.is(missing.status, 401);
  t.regex(((await missing.json()) as { message: string }).message, /X-AGENT-SECRET: <API_KEY>/, 'the 401 names the header this route takes');
  t.is((await agent(voiceRequest(16000), { 'x-agent-secret': apiKey, authorization: `Bearer ${apiKey}` })).status, 400);
});

test('400: not a voice-request, empty text, unsupported rate, missing message; nothing charged', async (t) => {
  const { apiKey } = await p.bootstrap();
  const before = await remainingTokens(p, apiKey);
  const cases: Array<[unknown, RegExp]> = [
    [{ message: { type: 'assistant-request', text: TEXT, sampleRate: 16000 } }, /voice-request/],
    [{ message: { type: 'voice-request', text: '', sampleRate: 16000 } }, /message.text/],
    [{ message: { type: 'voice-request', text: '   ', sampleRate: 16000 } }, /message.text/],
    [{ message: { type: 'voice-request', text: TEXT, sampleRate: 44100 } }, /8000, 16000, 22050, 24000/],
    [{ message: { type: 'voice-request', text: TEXT } }, /sampleRate/],
    [{}, /message/],
  ];
  for (const [json, message] of cases) {
    const res = await agent(json, { 'x-agent-secret': apiKey });
    t.is(res.status, 400, JSON.stringify(json));
    const body = await res.json();
    t.is(body.statusCode, 400);
    t.regex(JSON.stringify(body.message), message);
  }
  t.is(await remainingTokens(p, apiKey), before);
});

test('query voiceId takes an id or a display name; engine v3 is 400 with the retirement message; unknown voice 400', async (t) => {
  const { apiKey } = await p.bootstrap();
  const byName = await agent(voiceRequest(16000), { 'x-agent-secret': apiKey }, '?voiceId=Nam');
  const byId = await agent(voiceRequest(16000), { 'x-agent-secret': apiKey }, '?voiceId=vi-south-male-nam&engine=v4');
  t.deepEqual(Buffer.from(await byName.arrayBuffer()), Buffer.from(await byId.arrayBuffer()));
  const retired = await agent(voiceRequest(16000), { 'x-agent-secret': apiKey }, '?engine=v3');
  t.is(retired.status, 400);
  t.regex((await retired.json()).message, /retired on 2026-09-24/);
  t.is((await agent(voiceRequest(16000), { 'x-agent-secret': apiKey }, '?voiceId=alloy')).status, 400);
});

test('charged characters x 3 x 1.3; aiRefine is never applied (no moderation, no surcharge)', async (t) => {
  const { apiKey } = await p.bootstrap();
  const text = 'Tin tức về ma túy hôm nay được cập nhật liên tục.';
  const before = await remainingTokens(p, apiKey);
  const res = await agent({ ...voiceRequest(16000, text), aiRefine: true }, { 'x-agent-secret': apiKey });
  t.is(res.status, 200);
  await res.arrayBuffer();
  t.is(before - (await remainingTokens(p, apiKey)), priceOf(text));
});

test('SPEC Billing 1: message.text is billed and limited as submitted, its spaces counted (it was trimmed first, unlike the other routes\' text)', async (t) => {
  const { apiKey } = await p.bootstrap();
  const text = `${TEXT}${' '.repeat(60)}`;
  const before = await remainingTokens(p, apiKey);
  const res = await agent(voiceRequest(16000, text), { 'x-agent-secret': apiKey });
  t.is(res.status, 200);
  await res.arrayBuffer();
  t.is(before - (await remainingTokens(p, apiKey)), priceOf(text));
  const over = await agent(voiceRequest(16000, `Xin chào${' '.repeat(49_993)}`), { 'x-agent-secret': apiKey });
  t.is(over.status, 400, '50,001 characters, most of them spaces');
  t.regex(JSON.stringify((await over.json()).message), /at most 50000 characters/);
});

test('a test key is capped at 100 words', async (t) => {
  const { apiKey } = await p.bootstrap({ kind: 'test' });
  const res = await agent(voiceRequest(16000, Array.from({ length: 101 }, () => 'vâng').join(' ')), { 'x-agent-secret': apiKey });
  t.is(res.status, 400);
  t.is((await res.json()).code, 'TEST_KEY_WORD_LIMIT');
});
