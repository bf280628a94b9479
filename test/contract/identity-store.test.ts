import test, { type ExecutionContext } from 'ava';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { openEmbeddedDb, openMemoryDb } from '../../core/adapters/embedded-db.ts';
import { createSqliteIdentity } from '../../core/adapters/identity/sqlite.ts';
import { createMongoIdentity } from '../../core/adapters/identity/mongo.ts';
import type { IdentityStore, SessionRecord, UserRecord } from '../../core/ports/identity.ts';

/** The identity store contract (users, sessions, lockout counters), run against every adapter. */
type Harness = { store: IdentityStore; close(): Promise<void> };

const T0 = Date.parse('2026-11-21T10:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

function user(overrides: Partial<UserRecord> = {}): UserRecord {
  return {
    id: `usr_${randomUUID()}`, accountId: 'acc_1', email: `${randomUUID().slice(0, 8)}@example.com`, name: null,
    passwordHash: 'scrypt$15$8$1$salt$hash', failedSignIns: 0, lockedUntil: null, createdAt: iso(T0), disabledAt: null, ...overrides,
  };
}

function session(userId: string, overrides: Partial<SessionRecord> = {}): SessionRecord {
  return { id: randomUUID().replace(/-/g, ''), userId, accountId: 'acc_1', method: 'password', createdAt: iso(T0), expiresAt: iso(T0 + 3600_000), revokedAt: null, ...overrides };
}

function identityContract(adapter: string, open: () => Promise<Harness>): void {
  const it = (rule: string, body: (store: IdentityStore, t: ExecutionContext) => Promise<void>) =>
    test(`${adapter}: ${rule}`, async (t) => {
      const harness = await open();
      t.teardown(() => harness.close());
      await body(harness.store, t);
    });

  it('users are created once per e-mail and read by id, e-mail and account', async (store, t) => {
    const a = user({ email: 'mai@example.com' });
    t.true(await store.users.create(a));
    t.false(await store.users.create(user({ email: 'mai@example.com' })), 'a second user with the same e-mail is refused');
    await store.users.create(user({ email: 'minh@example.com', createdAt: iso(T0 + 1) }));
    await store.users.create(user({ email: 'other@example.com', accountId: 'acc_2' }));
    t.deepEqual(await store.users.get(a.id), a);
    t.deepEqual(await store.users.findByEmail('mai@example.com'), a);
    t.is(await store.users.findByEmail('nobody@example.com'), null);
    t.deepEqual((await store.users.listByAccount('acc_1')).map((u) => u.email), ['mai@example.com', 'minh@example.com']);
  });

  it('failed sign-ins are counted and the threshold locks the user and restarts the count', async (store, t) => {
    const u = user();
    await store.users.create(u);
    const lock = iso(T0 + 900_000);
    t.deepEqual(await store.users.recordFailure(u.id, 3, lock), { failedSignIns: 1, lockedUntil: null });
    t.deepEqual(await store.users.recordFailure(u.id, 3, lock), { failedSignIns: 2, lockedUntil: null });
    t.deepEqual(await store.users.recordFailure(u.id, 3, lock), { failedSignIns: 0, lockedUntil: lock });
    t.is((await store.users.get(u.id))?.lockedUntil, lock);
    await store.users.recordSuccess(u.id);
    t.like(await store.users.get(u.id), { failedSignIns: 0, lockedUntil: null });
    t.is(await store.users.recordFailure('usr_missing', 3, lock), null);
  });

  it('concurrent failed sign-ins are all counted', async (store, t) => {
    const u = user();
    await store.users.create(u);
    await Promise.all(Array.from({ length: 8 }, () => store.users.recordFailure(u.id, 100, iso(T0))));
    t.is((await store.users.get(u.id))?.failedSignIns, 8);
  });

  it('a password hash can be replaced', async (store, t) => {
    const u = user();
    await store.users.create(u);
    t.true(await store.users.setPasswordHash(u.id, 'scrypt$15$8$1$new$hash'));
    t.is((await store.users.get(u.id))?.passwordHash, 'scrypt$15$8$1$new$hash');
    t.false(await store.users.setPasswordHash('usr_missing', 'x'));
  });

  it('a session is live until it expires or is revoked; a user can be signed out everywhere', async (store, t) => {
    const u = user();
    await store.users.create(u);
    const s1 = session(u.id);
    const s2 = session(u.id);
    const other = session('usr_other');
    for (const s of [s1, s2, other]) await store.sessions.create(s);
    t.deepEqual(await store.sessions.getLive(s1.id, iso(T0 + 1000)), s1);
    t.is(await store.sessions.getLive(s1.id, iso(T0 + 3600_000)), null, 'expired at its expiry');
    t.true(await store.sessions.revoke(s1.id, iso(T0 + 5)));
    t.false(await store.sessions.revoke(s1.id, iso(T0 + 6)));
    t.is(await store.sessions.getLive(s1.id, iso(T0 + 1000)), null);
    t.is(await store.sessions.revokeByUser(u.id, iso(T0 + 7)), 1);
    t.is(await store.sessions.getLive(s2.id, iso(T0 + 1000)), null);
    t.truthy(await store.sessions.getLive(other.id, iso(T0 + 1000)));
  });
}

identityContract('sqlite', async () => {
  const db = openMemoryDb();
  return { store: createSqliteIdentity(db), close: async () => void db.close() };
});

test('sqlite: two connections to one file count every failure', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'identity-contract-'));
  const [a, b] = [openEmbeddedDb(dir), openEmbeddedDb(dir)];
  t.teardown(async () => {
    a.close();
    b.close();
    await rm(dir, { recursive: true, force: true });
  });
  const [storeA, storeB] = [createSqliteIdentity(a), createSqliteIdentity(b)];
  const u = user();
  await storeA.users.create(u);
  await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? storeA : storeB).users.recordFailure(u.id, 100, iso(T0))));
  t.is((await storeB.users.get(u.id))?.failedSignIns, 6);
});

const mongoUrl = process.env.MONGODB_URL;
if (mongoUrl) {
  const client = new MongoClient(mongoUrl);
  test.after.always(() => client.close());
  identityContract('mongo', async () => {
    const db = client.db(`contract_identity_${randomUUID().slice(0, 8)}`);
    return { store: await createMongoIdentity(db), close: async () => void (await db.dropDatabase()) };
  });
} else {
  console.log('identity store contract: MongoDB adapter skipped, MONGODB_URL is not set');
}
