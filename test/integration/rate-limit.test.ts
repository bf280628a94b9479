import test from 'ava';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

let p: TestPlatform;
test.before(async () => {
  p = await startTestPlatform({ ACCOUNT_ROUTES_PER_MINUTE: '3' });
});
test.after.always(async () => {
  await p?.stop();
});

test('a refused call carries X-RateLimit-Limit, -Remaining, -Reset and Retry-After', async (t) => {
  const { apiKey } = await p.bootstrap();
  for (let i = 0; i < 3; i++) t.is((await p.api('/balance', { key: apiKey })).status, 200);
  const res = await p.api('/balance', { key: apiKey });
  t.is(res.status, 429);
  t.is(res.headers.get('x-ratelimit-limit'), '3');
  t.is(res.headers.get('x-ratelimit-remaining'), '0');
  const reset = Number(res.headers.get('x-ratelimit-reset'));
  t.true(reset >= 1 && reset <= 60);
  t.is(res.headers.get('retry-after'), String(reset));
  const body = await res.json();
  t.is(body.statusCode, 429);
  t.is(body.retryAfterSeconds, reset);
});

test('rate limits are counted per key', async (t) => {
  const a = await p.bootstrap();
  const b = await p.bootstrap();
  for (let i = 0; i < 3; i++) await p.api('/balance', { key: a.apiKey });
  t.is((await p.api('/balance', { key: a.apiKey })).status, 429);
  t.is((await p.api('/balance', { key: b.apiKey })).status, 200);
});

test('unthrottled routes stay unthrottled', async (t) => {
  const { apiKey } = await p.bootstrap();
  for (let i = 0; i < 10; i++) t.is((await p.api('/voices', { key: apiKey })).status, 200);
  for (let i = 0; i < 10; i++) t.is((await p.api('/audio/voices', { key: apiKey })).status, 200);
});
