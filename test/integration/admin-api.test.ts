/**
 * README, Accounts, keys and grants (admin): the admin API's bodies, its
 * refusals in the native envelope, and its token amounts.
 */
import test from 'ava';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

let p: TestPlatform;
test.before(async () => {
  p = await startTestPlatform();
});
test.after.always(async () => {
  await p?.stop();
});

test('an expiresAt in the past is 400 VALIDATION_FAILED on bootstrap and on grant creation, before anything is written', async (t) => {
  const bootstrap = await p.admin('/bootstrap', { method: 'POST', json: { name: 'Orphan probe', grant: { totalTokens: 100, expiresAt: '2020-01-01T00:00:00Z' } } });
  t.is(bootstrap.status, 400);
  const refusal = await bootstrap.json();
  t.like(refusal, { statusCode: 400, code: 'VALIDATION_FAILED', message: ['grant.expiresAt must be in the future'] });
  t.false(JSON.stringify(refusal).includes('grt_'), 'no grant id: none was made');
  const acct = await p.bootstrap();
  const grant = await p.admin(`/accounts/${acct.accountId}/grants`, { method: 'POST', json: { totalTokens: 100, expiresAt: '2020-01-01' } });
  t.is(grant.status, 400);
  t.like(await grant.json(), { statusCode: 400, code: 'VALIDATION_FAILED', message: ['expiresAt must be in the future'] });
  const { grants } = await (await p.admin(`/accounts/${acct.accountId}/balance`)).json();
  t.is(grants.length, 1, 'only the bootstrap grant');
});

test(`token amounts are capped at 10^12 per grant (totalTokens, dailyCap, weeklyCap), so /balance's sums stay exact`, async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 1_000_000_000_000 } });
  for (const field of ['totalTokens', 'dailyCap', 'weeklyCap']) {
    const res = await p.admin(`/accounts/${acct.accountId}/grants`, { method: 'POST', json: { totalTokens: 100, [field]: 1_000_000_000_001 } });
    t.is(res.status, 400, field);
    t.like(await res.json(), { code: 'VALIDATION_FAILED' }, field);
  }
  t.is((await p.admin(`/accounts/${acct.accountId}/grants`, { method: 'POST', json: { totalTokens: Number.MAX_SAFE_INTEGER } })).status, 400);
  t.is((await p.admin(`/accounts/${acct.accountId}/grants`, { method: 'POST', json: { totalTokens: 1_000_000_000_000, isGift: true } })).status, 201);
  const balance = await (await p.api('/balance', { key: acct.apiKey })).json();
  t.is(balance.totalRemainingTokens, 2_000_000_000_000);
  t.is(balance.spendableTokens, 2_000_000_000_000);
});

test('the admin API refuses strings where it takes numbers or booleans (JSON carries them as such)', async (t) => {
  const acct = await p.bootstrap();
  const bodies: Array<Record<string, unknown>> = [
    { totalTokens: '100' },
    { totalTokens: 100, dailyCap: '50' },
    { totalTokens: 100, weeklyCap: '50' },
    { totalTokens: 100, expiresInDays: '30' },
    { totalTokens: 100, isGift: 'true' },
  ];
  for (const body of bodies) {
    const res = await p.admin(`/accounts/${acct.accountId}/grants`, { method: 'POST', json: body });
    t.is(res.status, 400, JSON.stringify(body));
    t.like(await res.json(), { statusCode: 400, code: 'VALIDATION_FAILED' }, JSON.stringify(body));
  }
  t.is((await p.admin('/bootstrap', { method: 'POST', json: { name: 'Strings', grant: { totalTokens: '100' } } })).status, 400);
  t.is((await p.admin(`/accounts/${acct.accountId}/clones`, { method: 'POST', json: { name: 'Giọng', baseVoiceId: 'vi-north-male-minh', referenceAvailable: 'false' } })).status, 400);
  t.is((await p.admin(`/accounts/${acct.accountId}/grants`, { method: 'POST', json: { totalTokens: 100, dailyCap: 50, expiresInDays: 30, isGift: false } })).status, 201);
});

test('an unknown route under /admin/v1 is 404 ROUTE_NOT_FOUND naming /admin/v1, not /api/v1', async (t) => {
  for (const [method, path] of [['GET', '/nothing'], ['DELETE', '/keys/']]) {
    const res = await p.admin(path, { method });
    t.is(res.status, 404, `${method} ${path}`);
    const body = await res.json();
    t.is(body.code, 'ROUTE_NOT_FOUND');
    t.regex(body.message, /under \/admin\/v1\.$/);
    t.notRegex(body.message, /api\/v1/);
  }
  t.regex((await (await p.api('/nothing')).json()).message, /Every API route lives under \/api\/v1\./);
});
