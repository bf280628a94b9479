import test from 'ava';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait.ts';
import { DomainError } from '../../core/errors.ts';
import { coreServices } from '../../core/services.ts';

let p: TestPlatform;
test.before(async () => {
  p = await startTestPlatform();
});
test.after.always(async () => {
  await p?.stop();
});

const PRICE = 195; // 50 characters x 3 x 1.3

test('race: 200 concurrent charges against a grant that can pay exactly 37: 37 succeed, the rest are refused, the ledger holds 37 charges', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: PRICE * 37 + 100 } });
  const [billing, documents] = await Promise.all([p.platform.service(coreServices.billing), p.platform.service(coreServices.documents)]);
  const payer = { accountId: acct.accountId, keyId: acct.keyId, grantId: acct.grantId };
  const results = await Promise.allSettled(
    Array.from({ length: 200 }, (_, i) => billing.charge({ payer, engine: 'v4', tokens: PRICE, route: 'tts', requestId: `r${i}` })),
  );
  const ok = results.filter((r) => r.status === 'fulfilled');
  const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  t.is(ok.length, 37);
  t.is(refused.length, 163);
  for (const r of refused) {
    t.true(r.reason instanceof DomainError);
    t.true(['GRANT_TOKENS_EXHAUSTED', 'CONCURRENT_CONFLICT'].includes((r.reason as DomainError).code!));
  }
  const grant = (await documents.grants.get(acct.grantId))!;
  t.is(grant.usedTokens, PRICE * 37);
  t.true(grant.totalTokens - grant.usedTokens >= 0);
  await waitFor(async () => (await documents.ledger.sumByGrant(acct.grantId)).entries === 37, { what: '37 ledger entries' });
  t.is((await documents.ledger.sumByGrant(acct.grantId)).charged, PRICE * 37);
  const reconcile = await (await p.admin(`/grants/${acct.grantId}/reconcile`)).json();
  t.true(reconcile.balanced);
});

test('a refund returns to the grant that paid, once, and the ledger reconciles', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 100 } });
  const gift = await (await p.admin(`/accounts/${acct.accountId}/grants`, { method: 'POST', json: { totalTokens: 10_000, isGift: true } })).json();
  const [billing, documents] = await Promise.all([p.platform.service(coreServices.billing), p.platform.service(coreServices.documents)]);
  const payer = { accountId: acct.accountId, keyId: acct.keyId, grantId: acct.grantId };
  const charge = await billing.charge({ payer, engine: 'v4', tokens: PRICE, route: 'tts', requestId: 'x' });
  t.is(charge.grantId, gift.id, 'the own grant cannot pay, so the other active grant pays');
  t.true(await billing.refund(charge));
  t.false(await billing.refund(charge), 'a second refund of the same charge applies nothing');
  t.is((await documents.grants.get(gift.id))!.usedTokens, 0);
  await waitFor(async () => (await documents.ledger.sumByGrant(gift.id)).entries === 2, { what: 'charge and refund in the ledger' });
  const reconcile = await (await p.admin(`/grants/${gift.id}/reconcile`)).json();
  t.true(reconcile.balanced);
  t.is(reconcile.ledgerNet, 0);
});

test('one request is paid by one grant: nothing is split across grants', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 150 } });
  await p.admin(`/accounts/${acct.accountId}/grants`, { method: 'POST', json: { totalTokens: 150 } });
  const billing = await p.platform.service(coreServices.billing);
  const payer = { accountId: acct.accountId, keyId: acct.keyId, grantId: acct.grantId };
  const err = await t.throwsAsync(billing.charge({ payer, engine: 'v4', tokens: PRICE, route: 'tts', requestId: 'y' }));
  t.is((err as DomainError).code, 'GRANT_TOKENS_EXHAUSTED');
});

test('race against a daily cap: the charges that lose are refused GRANT_DAILY_LIMIT with resetAt from a fresh read, not from the snapshot they started with', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 1_000_000, dailyCap: PRICE * 5 + 10 } });
  const billing = await p.platform.service(coreServices.billing);
  const payer = { accountId: acct.accountId, keyId: acct.keyId, grantId: acct.grantId };
  // All of them read the grant while it could still pay, then race for it.
  const results = await Promise.allSettled(
    Array.from({ length: 40 }, (_, i) => billing.charge({ payer, engine: 'v4', tokens: PRICE, route: 'tts', requestId: `cap${i}` })),
  );
  t.is(results.filter((r) => r.status === 'fulfilled').length, 5);
  for (const r of results.filter((x): x is PromiseRejectedResult => x.status === 'rejected')) {
    const err = r.reason as DomainError;
    t.is(err.code, 'GRANT_DAILY_LIMIT');
    t.like(err.details, { remaining: 10, required: PRICE });
    t.truthy((err.details as { resetAt?: string }).resetAt);
  }
});
