import test, { type ExecutionContext } from 'ava';
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { openMemoryDb } from '../../core/adapters/embedded-db.ts';
import { createSqliteOAuthStore } from '../../plugins/oauth/store-sqlite.ts';
import { createMongoOAuthStore } from '../../plugins/oauth/store-mongo.ts';
import type { OAuthStore } from '../../plugins/oauth/store.ts';

/** The OAuth records store (oidc-provider's storage), run against every adapter. */
type Harness = { store: OAuthStore; close(): Promise<void> };
const NOW = Date.parse('2026-11-21T10:00:00.000Z');

function oauthContract(adapter: string, open: () => Promise<Harness>): void {
  const it = (rule: string, body: (store: OAuthStore, t: ExecutionContext) => Promise<void>) =>
    test(`${adapter}: ${rule}`, async (t) => {
      const harness = await open();
      t.teardown(() => harness.close());
      await body(harness.store, t);
    });

  it('a record is found until it expires; upsert replaces it', async (store, t) => {
    await store.upsert({ model: 'AccessToken', id: 'at1', payload: { jti: 'at1', grantId: 'g1' }, expiresAt: NOW + 3600_000 });
    t.deepEqual(await store.find('AccessToken', 'at1', NOW), { jti: 'at1', grantId: 'g1' });
    t.is(await store.find('AccessToken', 'at1', NOW + 3600_000), null, 'expired at its expiry');
    t.is(await store.find('RefreshToken', 'at1', NOW), null, 'models are separate');
    await store.upsert({ model: 'AccessToken', id: 'at1', payload: { jti: 'at1', grantId: 'g2' }, expiresAt: null });
    t.deepEqual(await store.find('AccessToken', 'at1', NOW + 10 * 3600_000), { jti: 'at1', grantId: 'g2' }, 'no expiry: kept');
  });

  it('consume marks a record used and destroy removes it', async (store, t) => {
    await store.upsert({ model: 'RefreshToken', id: 'rt', payload: { jti: 'rt' }, expiresAt: NOW + 60_000 });
    await store.consume('RefreshToken', 'rt', 1_795_000_000);
    t.deepEqual(await store.find('RefreshToken', 'rt', NOW), { jti: 'rt', consumed: 1_795_000_000 });
    await store.destroy('RefreshToken', 'rt');
    t.is(await store.find('RefreshToken', 'rt', NOW), null);
  });

  it('lookups by uid and user code', async (store, t) => {
    await store.upsert({ model: 'Session', id: 's1', payload: { uid: 'u-1', accountId: 'usr_1' }, expiresAt: NOW + 60_000 });
    await store.upsert({ model: 'DeviceCode', id: 'd1', payload: { userCode: 'ABCD' }, expiresAt: NOW + 60_000 });
    t.deepEqual(await store.findByUid('Session', 'u-1', NOW), { uid: 'u-1', accountId: 'usr_1' });
    t.deepEqual(await store.findByUserCode('DeviceCode', 'ABCD', NOW), { userCode: 'ABCD' });
    t.is(await store.findByUid('Session', 'u-2', NOW), null);
  });

  it('revoking a grant deletes every record of the model issued under it, and nothing else', async (store, t) => {
    for (const id of ['a', 'b']) await store.upsert({ model: 'AccessToken', id, payload: { grantId: 'g1' }, expiresAt: NOW + 60_000 });
    await store.upsert({ model: 'AccessToken', id: 'c', payload: { grantId: 'g2' }, expiresAt: NOW + 60_000 });
    await store.upsert({ model: 'RefreshToken', id: 'r', payload: { grantId: 'g1' }, expiresAt: NOW + 60_000 });
    await store.revokeByGrantId('AccessToken', 'g1');
    t.is(await store.find('AccessToken', 'a', NOW), null);
    t.is(await store.find('AccessToken', 'b', NOW), null);
    t.truthy(await store.find('AccessToken', 'c', NOW));
    t.truthy(await store.find('RefreshToken', 'r', NOW), 'another model is revoked by its own call');
  });

  it('grants are listed per account, live ones only', async (store, t) => {
    await store.upsert({ model: 'Grant', id: 'g2', payload: { accountId: 'usr_1', clientId: 'c2' }, expiresAt: NOW + 60_000 });
    await store.upsert({ model: 'Grant', id: 'g1', payload: { accountId: 'usr_1', clientId: 'c1' }, expiresAt: null });
    await store.upsert({ model: 'Grant', id: 'g3', payload: { accountId: 'usr_1', clientId: 'c3' }, expiresAt: NOW - 1 });
    await store.upsert({ model: 'Grant', id: 'g4', payload: { accountId: 'usr_2', clientId: 'c1' }, expiresAt: null });
    await store.upsert({ model: 'Session', id: 's', payload: { accountId: 'usr_1' }, expiresAt: null });
    t.deepEqual((await store.listByAccount('Grant', 'usr_1', NOW)).map((g) => g.id), ['g1', 'g2']);
  });

  it('insertIfAbsent keeps the first record (one signing key for every process)', async (store, t) => {
    t.deepEqual(await store.insertIfAbsent({ model: 'SigningKey', id: 'current', payload: { k: 1 }, expiresAt: null }), { k: 1 });
    t.deepEqual(await store.insertIfAbsent({ model: 'SigningKey', id: 'current', payload: { k: 2 }, expiresAt: null }), { k: 1 });
  });

  it('expired records are purged', async (store, t) => {
    await store.upsert({ model: 'Interaction', id: 'old', payload: {}, expiresAt: NOW - 1000 });
    await store.upsert({ model: 'Interaction', id: 'new', payload: {}, expiresAt: NOW + 1000 });
    t.is(await store.purgeExpired(NOW), 1);
    t.truthy(await store.find('Interaction', 'new', NOW));
  });
}

oauthContract('sqlite', async () => {
  const db = openMemoryDb();
  return { store: createSqliteOAuthStore(db, 'oauth_'), close: async () => void db.close() };
});

const mongoUrl = process.env.MONGODB_URL;
if (mongoUrl) {
  const client = new MongoClient(mongoUrl);
  test.after.always(() => client.close());
  oauthContract('mongo', async () => {
    const db = client.db(`contract_oauth_${randomUUID().slice(0, 8)}`);
    return { store: await createMongoOAuthStore(db, 'oauth_'), close: async () => void (await db.dropDatabase()) };
  });
} else {
  console.log('oauth store contract: MongoDB adapter skipped, MONGODB_URL is not set');
}
