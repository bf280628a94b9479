import type { Db } from 'mongodb';
import type { IdentityStore, SessionRecord, UserRecord } from '../../ports/identity.ts';

/**
 * Production identity adapter on MongoDB. Records keep the port's field
 * names with `id` stored as `_id`. A failed sign-in is counted with a
 * compare-and-set on the previous count (plain update operators, so it runs
 * on every MongoDB-protocol server), retried when another process counted
 * first: no failure is lost.
 */

type UserDoc = Omit<UserRecord, 'id'> & { _id: string };
type SessionDoc = Omit<SessionRecord, 'id'> & { _id: string; expiresMs: number };

function toUser(doc: UserDoc | null): UserRecord | null {
  if (!doc) return null;
  const { _id, ...rest } = doc;
  return { ...rest, id: _id };
}

function toSession(doc: SessionDoc | null): SessionRecord | null {
  if (!doc) return null;
  const { _id, expiresMs: _e, ...rest } = doc;
  return { ...rest, id: _id };
}

const DUPLICATE_KEY = 11000;

export async function createMongoIdentity(db: Db): Promise<IdentityStore> {
  const users = db.collection<UserDoc>('identity_users');
  const sessions = db.collection<SessionDoc>('identity_sessions');
  await users.createIndexes([{ key: { email: 1 }, unique: true }, { key: { accountId: 1, createdAt: 1 } }]);
  await sessions.createIndex({ userId: 1 });

  return {
    users: {
      async create(user) {
        const { id, ...rest } = user;
        try {
          await users.insertOne({ ...rest, _id: id });
          return true;
        } catch (err) {
          if ((err as { code?: number }).code === DUPLICATE_KEY) return false;
          throw err;
        }
      },
      async get(id) {
        return toUser(await users.findOne({ _id: id }));
      },
      async findByEmail(email) {
        return toUser(await users.findOne({ email }));
      },
      async listByAccount(accountId) {
        const docs = await users.find({ accountId }).sort({ createdAt: 1, _id: 1 }).toArray();
        return docs.map((d) => toUser(d)!);
      },
      async recordFailure(id, max, lockUntil) {
        for (;;) {
          const doc = await users.findOne({ _id: id }, { projection: { failedSignIns: 1, lockedUntil: 1 } });
          if (!doc) return null;
          const reached = doc.failedSignIns + 1 >= max;
          const next = { failedSignIns: reached ? 0 : doc.failedSignIns + 1, lockedUntil: reached ? lockUntil : doc.lockedUntil };
          const res = await users.updateOne({ _id: id, failedSignIns: doc.failedSignIns, lockedUntil: doc.lockedUntil }, { $set: next });
          if (res.modifiedCount === 1 || res.matchedCount === 1) return next;
        }
      },
      async recordSuccess(id) {
        await users.updateOne({ _id: id }, { $set: { failedSignIns: 0, lockedUntil: null } });
      },
      async setPasswordHash(id, hash) {
        return (await users.updateOne({ _id: id }, { $set: { passwordHash: hash } })).matchedCount === 1;
      },
    },
    sessions: {
      async create(session) {
        const { id, ...rest } = session;
        await sessions.insertOne({ ...rest, _id: id, expiresMs: Date.parse(session.expiresAt) });
      },
      async getLive(id, now) {
        return toSession(await sessions.findOne({ _id: id, revokedAt: null, expiresMs: { $gt: Date.parse(now) } }));
      },
      async revoke(id, at) {
        return (await sessions.updateOne({ _id: id, revokedAt: null }, { $set: { revokedAt: at } })).modifiedCount === 1;
      },
      async revokeByUser(userId, at) {
        return (await sessions.updateMany({ userId, revokedAt: null }, { $set: { revokedAt: at } })).modifiedCount;
      },
    },
  };
}
