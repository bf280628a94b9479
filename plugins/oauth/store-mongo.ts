import type { Db } from 'mongodb';
import { indexedFields, type OAuthStore } from './store.ts';

interface RecordDoc {
  _id: string;
  model: string;
  id: string;
  payload: Record<string, unknown>;
  grantId: string | null;
  uid: string | null;
  userCode: string | null;
  accountId: string | null;
  /** a Date, so MongoDB's TTL index removes expired records by itself */
  expiresAt: Date | null;
  consumed: number | null;
}

const DUPLICATE_KEY = 11000;

/** The authorization server's records on MongoDB (collection `<prefix>records`, expired records dropped by a TTL index). */
export async function createMongoOAuthStore(db: Db, prefix: string): Promise<OAuthStore> {
  const records = db.collection<RecordDoc>(`${prefix}records`);
  await records.createIndexes([
    { key: { grantId: 1 }, sparse: true },
    { key: { model: 1, uid: 1 }, sparse: true },
    { key: { model: 1, userCode: 1 }, sparse: true },
    { key: { model: 1, accountId: 1 }, sparse: true },
    { key: { expiresAt: 1 }, expireAfterSeconds: 0 },
  ]);
  const live = (now: number) => ({ $or: [{ expiresAt: null }, { expiresAt: { $gt: new Date(now) } }] });
  const read = (doc: RecordDoc | null) => (doc ? (doc.consumed === null ? doc.payload : { ...doc.payload, consumed: doc.consumed }) : null);

  return {
    async upsert({ model, id, payload, expiresAt }) {
      await records.replaceOne(
        { _id: `${model}:${id}` },
        { model, id, payload, ...indexedFields(payload), expiresAt: expiresAt === null ? null : new Date(expiresAt), consumed: null },
        { upsert: true },
      );
    },
    async insertIfAbsent({ model, id, payload, expiresAt }) {
      try {
        await records.insertOne({ _id: `${model}:${id}`, model, id, payload, ...indexedFields(payload), expiresAt: expiresAt === null ? null : new Date(expiresAt), consumed: null });
        return payload;
      } catch (err) {
        if ((err as { code?: number }).code !== DUPLICATE_KEY) throw err;
        return read(await records.findOne({ _id: `${model}:${id}` })) ?? payload;
      }
    },
    async find(model, id, now) {
      return read(await records.findOne({ _id: `${model}:${id}`, ...live(now) }));
    },
    async findByUid(model, uid, now) {
      return read(await records.findOne({ model, uid, ...live(now) }));
    },
    async findByUserCode(model, userCode, now) {
      return read(await records.findOne({ model, userCode, ...live(now) }));
    },
    async consume(model, id, at) {
      await records.updateOne({ _id: `${model}:${id}` }, { $set: { consumed: at } });
    },
    async destroy(model, id) {
      await records.deleteOne({ _id: `${model}:${id}` });
    },
    async revokeByGrantId(model, grantId) {
      await records.deleteMany({ model, grantId });
    },
    async listByAccount(model, accountId, now) {
      const docs = await records.find({ model, accountId, ...live(now) }).sort({ id: 1 }).toArray();
      return docs.map((d) => ({ id: d.id, payload: d.payload }));
    },
    async purgeExpired(now) {
      return (await records.deleteMany({ expiresAt: { $ne: null, $lte: new Date(now) } })).deletedCount;
    },
  };
}
