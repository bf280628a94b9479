import test from 'ava';
import type { TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait.ts';
import { longText, priceOf, remainingTokens, startSpeechPlatform } from '../helpers/speech.ts';

/** Long enough that a stream whose client does not read stays open until it is cancelled. */
const LONG = longText(120);

let p: TestPlatform;
let busy: TestPlatform;
test.before(async () => {
  [p, busy] = await Promise.all([startSpeechPlatform(), startSpeechPlatform({ STREAM_CAPACITY: '1', RATE_SPEECH_PER_MINUTE: '3' })]);
});
test.after.always(async () => {
  await Promise.all([p?.stop(), busy?.stop()]);
});

const openStream = (platform: TestPlatform, apiKey: string) => platform.api('/tts/stream', { method: 'POST', key: apiKey, json: { text: LONG } });

test('STREAM_CONCURRENCY: 5 concurrent streams on one grant (two keys sharing it) — the 5th is 429 and charged nothing', async (t) => {
  const { accountId, grantId, apiKey } = await p.bootstrap();
  const second = await (await p.admin(`/accounts/${accountId}/keys`, { method: 'POST', json: { grantId } })).json();
  const keys = [apiKey, second.apiKey, apiKey, second.apiKey, apiKey];
  const before = await remainingTokens(p, apiKey);
  const responses = await Promise.all(keys.map((key) => openStream(p, key)));
  const statuses = responses.map((r) => r.status).sort();
  t.deepEqual(statuses, [200, 200, 200, 200, 429]);
  const refused = responses.find((r) => r.status === 429)!;
  const body = await refused.json();
  t.is(body.code, 'STREAM_CONCURRENCY');
  t.is(body.statusCode, 429);
  // SPEC tell-apart: an application 429 carries Retry-After and X-RateLimit-* (here of the limit that refused it).
  t.is(refused.headers.get('retry-after'), '1');
  t.is(refused.headers.get('x-ratelimit-limit'), '4');
  t.is(refused.headers.get('x-ratelimit-remaining'), '0');
  t.is(before - (await remainingTokens(p, apiKey)), 4 * priceOf(LONG), 'only the four open streams were charged');

  // Closing one frees its slot for the next stream.
  const open = responses.filter((r) => r.status === 200);
  await open[0].body!.cancel();
  const again: Response = await waitFor(async () => {
    const res = await openStream(p, second.apiKey);
    if (res.status === 200) return res;
    await res.arrayBuffer();
    return null;
  }, { what: 'a slot to be released', timeoutMs: 5000 }) as Response;
  t.is(again.status, 200);
  await Promise.all([again, ...open.slice(1)].map((r) => r.body!.cancel()));
});

test('streams of another grant are not counted against this one', async (t) => {
  const a = await p.bootstrap();
  const b = await p.bootstrap();
  const held = await Promise.all([1, 2, 3, 4].map(() => openStream(p, a.apiKey)));
  t.true(held.every((r) => r.status === 200));
  const other = await openStream(p, b.apiKey);
  t.is(other.status, 200);
  await Promise.all([...held, other].map((r) => r.body!.cancel()));
});

test('STREAM_BUSY: a full service answers 503 with fallback "generate", nothing charged', async (t) => {
  const holder = await busy.bootstrap();
  const caller = await busy.bootstrap();
  const held = await openStream(busy, holder.apiKey);
  t.is(held.status, 200);
  const before = await remainingTokens(busy, caller.apiKey);
  const res = await openStream(busy, caller.apiKey);
  t.is(res.status, 503);
  const body = await res.json();
  t.like(body, { statusCode: 503, code: 'STREAM_BUSY', fallback: 'generate' });
  t.is(res.headers.get('retry-after'), '5');
  t.is(await remainingTokens(busy, caller.apiKey), before);
  // Nothing was synthesised: usage says unavailable, not failed.
  const codes = await waitFor(async () => {
    const usage = await (await busy.api('/usage', { key: caller.apiKey })).json() as { byErrorCode: Array<{ errorCode: string; statusCode: number }> };
    return usage.byErrorCode.length > 0 ? usage.byErrorCode : null;
  }, { what: 'the refusal in usage' });
  t.deepEqual((codes ?? []).map((c) => [c.errorCode, c.statusCode]), [['synthesis_unavailable', 503]]);
  await held.body!.cancel();
});

test('POST /audio/speech over the per-key rate: 429 rate_limit_exceeded in the compatible envelope with X-RateLimit headers', async (t) => {
  const { apiKey } = await busy.bootstrap();
  const call = () => busy.api('/audio/speech', { method: 'POST', key: apiKey, json: { input: 'Xin chào.', response_format: 'pcm' } });
  for (let i = 0; i < 3; i++) {
    const res = await call();
    t.is(res.status, 200);
    await res.arrayBuffer();
  }
  const limited = await call();
  t.is(limited.status, 429);
  t.is(limited.headers.get('x-ratelimit-limit'), '3');
  t.truthy(limited.headers.get('retry-after'));
  const text = await limited.text();
  t.deepEqual(JSON.parse(text), { error: { message: JSON.parse(text).error.message, type: 'rate_limit_exceeded', param: null, code: null } });
});
