/**
 * POST /tts under concurrency (issue 9): the per-account queue limit and the
 * queue depth are taken in the write that accepts a job, so a burst gets
 * exactly the limit and pays for nothing else; a burst against a daily cap
 * is refused with the cap's own code, computed from a fresh read. Each runs
 * on the embedded stack and on MongoDB.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { recordStacks } from '../helpers/stacks.ts';

const TEXT = 'Xin chào các bạn, hôm nay chúng ta cùng nghe thử giọng đọc tiếng Việt.';
// Each submission is TEXT, a space and 8 characters of its own: characters x v4 multiplier 3 x 1.3, rounded up.
const PRICE = Math.ceil(Math.round(([...TEXT.normalize('NFC')].length + 9) * 3 * 1.3 * 1e6) / 1e6);
// No inference role: accepted jobs stay queued, so the limits stay reached for the whole burst.
const NO_RENDERING = { ROLES: 'api,pipelines', RATE_SPEECH_PER_MINUTE: '100000' };

async function burst(p: TestPlatform, keys: string[], count: number) {
  return Promise.all(Array.from({ length: count }, async (_, i) => {
    const key = keys[i % keys.length];
    const res = await p.api('/tts', { method: 'POST', key, json: { text: `${TEXT} ${randomUUID().slice(0, 8)}` } });
    return { key, status: res.status, body: await res.json() };
  }));
}

const spent = async (p: TestPlatform, key: string) => {
  const balance = await (await p.api('/balance', { key })).json();
  return balance.plan.totalTokens - balance.totalRemainingTokens;
};

for (const stack of recordStacks('jobs accept')) {
  test(`${stack.name}: 300 concurrent POST /tts of one account: exactly USER_QUEUE_MAX (30) accepted, the rest 429 USER_QUEUE_FULL, 30 charges`, async (t) => {
    t.timeout(180_000, 'hundreds of requests on two shared cores');
    const use = stack.use();
    const p = await startTestPlatform({ ...use.env, ...NO_RENDERING, USER_QUEUE_MAX: '30' });
    t.teardown(async () => {
      await p.stop();
      await use.drop();
    });
    const acct = await p.bootstrap({ grant: { totalTokens: 1_000_000 } });
    const results = await burst(p, [acct.apiKey], 300);
    const accepted = results.filter((r) => r.status === 201);
    t.is(accepted.length, 30);
    for (const r of results.filter((x) => x.status !== 201)) {
      t.is(r.status, 429);
      t.like(r.body, { code: 'USER_QUEUE_FULL', retryAfterSeconds: 15 });
    }
    t.is(await spent(p, acct.apiKey), 30 * PRICE, 'only the accepted jobs are charged');
    const again = await p.api('/tts', { method: 'POST', key: acct.apiKey, json: { text: TEXT } });
    t.is(again.status, 429, 'the account still holds its 30 queued jobs');
  });

  test(`${stack.name}: concurrent POST /tts of several accounts against QUEUE_MAX_DEPTH: exactly the depth accepted, the rest 429 QUEUE_FULL, nothing charged for them`, async (t) => {
    t.timeout(180_000, 'hundreds of requests on two shared cores');
    const use = stack.use();
    const p = await startTestPlatform({ ...use.env, ...NO_RENDERING, QUEUE_MAX_DEPTH: '40', USER_QUEUE_MAX: '1000' });
    t.teardown(async () => {
      await p.stop();
      await use.drop();
    });
    const accounts = await Promise.all([0, 1, 2, 3].map(() => p.bootstrap({ grant: { totalTokens: 1_000_000 } })));
    const results = await burst(p, accounts.map((a) => a.apiKey), 120);
    t.is(results.filter((r) => r.status === 201).length, 40);
    for (const r of results.filter((x) => x.status !== 201)) {
      t.is(r.status, 429);
      t.like(r.body, { code: 'QUEUE_FULL', retryAfterSeconds: 15 });
    }
    const charged = await Promise.all(accounts.map((a) => spent(p, a.apiKey)));
    t.is(charged.reduce((sum, n) => sum + n, 0), 40 * PRICE);
    for (const [i, a] of accounts.entries()) {
      t.is(charged[i], results.filter((r) => r.key === a.apiKey && r.status === 201).length * PRICE, 'each account pays for its accepted jobs only');
    }
  });

  test(`${stack.name}: a burst against a daily cap is refused 429 GRANT_DAILY_LIMIT with resetAt, never a stale GRANT_TOKENS_EXHAUSTED`, async (t) => {
    t.timeout(180_000, 'hundreds of requests on two shared cores');
    const use = stack.use();
    const p = await startTestPlatform({ ...use.env, ...NO_RENDERING, USER_QUEUE_MAX: '1000' });
    t.teardown(async () => {
      await p.stop();
      await use.drop();
    });
    const cap = 5 * PRICE + 10;
    const acct = await p.bootstrap({ grant: { totalTokens: 1_000_000, dailyCap: cap } });
    const results = await burst(p, [acct.apiKey], 40);
    t.is(results.filter((r) => r.status === 201).length, 5);
    for (const r of results.filter((x) => x.status !== 201)) {
      t.is(r.status, 429, `refused with ${r.body.code}`);
      t.is(r.body.code, 'GRANT_DAILY_LIMIT');
      t.truthy(r.body.resetAt);
      t.is(r.body.remaining, 10);
      t.is(r.body.required, PRICE);
    }
    t.is(await spent(p, acct.apiKey), 5 * PRICE);
  });
}
