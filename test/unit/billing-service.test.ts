/**
 * SPEC Billing rule 5 (which grant pays) and `GET /balance`, through the
 * billing service on the embedded grant store.
 */
import test from 'ava';
import { openMemoryDb } from '../../core/adapters/embedded-db.ts';
import { createSqliteDocuments } from '../../core/adapters/documents/sqlite.ts';
import { createBillingService } from '../../core/billing/service.ts';
import { defaultEngines } from '../../config/engines.ts';
import type { Documents } from '../../core/ports/documents.ts';
import type { Grant } from '../../core/ports/grants.ts';

const ACCOUNT = 'acc_billing';
const PRICE = 195; // 50 characters x 3 x 1.3

function grant(id: string, fields: Partial<Grant>): Grant {
  return {
    id, accountId: ACCOUNT, plan: id, totalTokens: 100_000, usedTokens: 0, dailyCap: null, weeklyCap: null,
    dayKey: null, dayUsed: 0, weekKey: null, weekUsed: 0, expiresAt: null, isGift: false, engines: ['v4'],
    status: 'active', createdAt: '2026-01-01T00:00:00.000Z', ...fields,
  };
}

async function setup(grants: Grant[], wrap: (documents: Documents) => Documents = (d) => d) {
  const db = openMemoryDb();
  const stored = createSqliteDocuments(db);
  for (const g of grants) await stored.grants.create(g);
  const documents = wrap(stored);
  const billing = createBillingService({
    documents, engines: defaultEngines(3), globalMultiplier: 1.3, aiRefineSurchargePerChar: 0.5, timezoneOffsetMinutes: 420,
  });
  return { db, documents: stored, billing };
}

test('SPEC Billing rule 5: a charge that lost its write on the key\'s own grant, which can pay after all when read again (a refund landed meanwhile), is tried on the own grant again, not on an older grant', async (t) => {
  let lostOnce = false;
  const { db, documents, billing } = await setup(
    [grant('grt_older', {}), grant('grt_own', { createdAt: '2026-02-01T00:00:00.000Z', totalTokens: 585, usedTokens: 390 })],
    // The own grant's first conditional write loses, as it does when another request took its room just before a refund gave it back.
    (d) => ({
      ...d,
      grants: {
        ...d.grants,
        charge: async (cmd) => {
          if (cmd.grantId === 'grt_own' && !lostOnce) {
            lostOnce = true;
            return { ok: false, grant: await d.grants.get(cmd.grantId) };
          }
          return d.grants.charge(cmd);
        },
      },
    }),
  );
  t.teardown(() => db.close());
  const charge = await billing.charge({ payer: { accountId: ACCOUNT, keyId: 'key_own', grantId: 'grt_own' }, engine: 'v4', tokens: PRICE, route: 'tts', requestId: 'req_1' });
  t.true(lostOnce);
  t.is(charge.grantId, 'grt_own');
  t.is((await documents.grants.get('grt_own'))!.usedTokens, 585);
  t.is((await documents.grants.get('grt_older'))!.usedTokens, 0);
});

test('GET /balance: a grant that does not cover the engine (a retired engine\'s grant) adds nothing to remaining or spendableTokens and is not the plan shown', async (t) => {
  const { db, billing } = await setup([
    grant('grt_older_v4', { totalTokens: 1_000 }),
    grant('grt_own_v3', { createdAt: '2026-02-01T00:00:00.000Z', engines: ['v3'] }),
  ]);
  t.teardown(() => db.close());
  const payer = { accountId: ACCOUNT, keyId: 'key_v3', grantId: 'grt_own_v3' };
  const before = await billing.balance(payer);
  t.like(before, { remaining: 1_000, spendableTokens: 1_000, totalRemainingTokens: 101_000 });
  t.is(before.plan?.grantId, 'grt_older_v4');
  // What the balance says can be spent is what a charge can take.
  for (let i = 0; i < 5; i++) t.is((await billing.charge({ payer, engine: 'v4', tokens: PRICE, route: 'tts', requestId: `req_${i}` })).grantId, 'grt_older_v4');
  const after = await billing.balance(payer);
  t.like(after, { remaining: 25, spendableTokens: 25 });
  await t.throwsAsync(billing.charge({ payer, engine: 'v4', tokens: PRICE, route: 'tts', requestId: 'req_6' }));
});
