/**
 * README, Accounts, keys and grants: bootstrap is one step for a working key,
 * and a grant that would be expired from the start is refused (400) before
 * anything is written, so a refused bootstrap leaves no account or grant.
 */
import test from 'ava';
import { openMemoryDb } from '../../core/adapters/embedded-db.ts';
import { createSqliteDocuments } from '../../core/adapters/documents/sqlite.ts';
import { createBillingService } from '../../core/billing/service.ts';
import { createAdminService } from '../../plugins/admin/service.ts';
import { defaultEngines } from '../../config/engines.ts';
import { ApiError } from '../../core/errors.ts';

const NOW = new Date('2026-11-29T05:00:00.000Z');

function setup(clock = () => NOW) {
  const db = openMemoryDb();
  const documents = createSqliteDocuments(db);
  const billing = createBillingService({ documents, engines: defaultEngines(3), globalMultiplier: 1.3, aiRefineSurchargePerChar: 0.5, timezoneOffsetMinutes: 420, instance: 'proc_test' });
  const admin = createAdminService({ documents, billing, clock });
  const rows = () => Object.fromEntries(['accounts', 'grants', 'api_keys'].map((table) => [table, (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n]));
  return { db, admin, rows };
}

for (const expiresAt of ['2020-01-01T00:00:00.000Z', NOW.toISOString()]) {
  test(`a bootstrap whose grant would be expired from the start (${expiresAt}) is 400 and writes nothing`, async (t) => {
    const { db, admin, rows } = setup();
    t.teardown(() => db.close());
    const err = await t.throwsAsync(admin.bootstrap({ name: 'Orphan', grant: { totalTokens: 100, expiresAt } }), { instanceOf: ApiError });
    t.like(err, { status: 400, fields: { code: 'VALIDATION_FAILED', param: 'grant.expiresAt' } });
    t.deepEqual(rows(), { accounts: 0, grants: 0, api_keys: 0 });
  });
}

test('a grant created with expiresAt in the past is 400 and writes nothing', async (t) => {
  const { db, admin, rows } = setup();
  t.teardown(() => db.close());
  const account = await admin.createAccount({ name: 'Acme' });
  const err = await t.throwsAsync(admin.createGrant(account.id, { totalTokens: 100, expiresAt: '2026-11-29T04:59:59.999Z' }), { instanceOf: ApiError });
  t.like(err, { status: 400, fields: { code: 'VALIDATION_FAILED', param: 'expiresAt' } });
  t.deepEqual(rows(), { accounts: 1, grants: 0, api_keys: 0 });
});

test('a bootstrap whose grant expires just after now gives a working key: the key is issued at the instant the grant was judged', async (t) => {
  // a clock that moves on a millisecond each time it is read
  let reads = 0;
  const { db, admin, rows } = setup(() => new Date(NOW.getTime() + reads++));
  t.teardown(() => db.close());
  const made = await admin.bootstrap({ name: 'Just in time', grant: { totalTokens: 100, expiresAt: '2026-11-29T05:00:00.001Z' } });
  t.regex(made.apiKey, /^vn_sk_/);
  t.deepEqual(rows(), { accounts: 1, grants: 1, api_keys: 1 });
});
