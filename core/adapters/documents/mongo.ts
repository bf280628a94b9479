import type { Db, MongoClient } from 'mongodb';
import { createMongoJobs } from './mongo-jobs.ts';
import { createMongoWebhooks } from '../webhooks/mongo.ts';
import { createMongoIdentity } from '../identity/mongo.ts';
import { createMongoSpill } from './mongo-spill.ts';
import type {
  Account,
  AccountsStore,
  ApiKeyRecord,
  ClonedVoice,
  ClonesStore,
  Documents,
  KeysStore,
} from '../../ports/documents.ts';
import { chargeQueuedIn, createBillingIndexes, createMongoGrants, createMongoHolds, type BeatDoc, type GrantDoc, type LedgerDoc, type MongoGrantsOptions } from './mongo-billing.ts';
import { createMongoLedger, createMongoOutbox } from './mongo-ledger.ts';

/**
 * Production documents adapter on MongoDB (mongodb driver). Records keep the
 * port's field names with `id` stored as `_id`. Indexes are created on start,
 * which is why the factory is async.
 */

type Doc<T extends { id: string }> = Omit<T, 'id'> & { _id: string };

function toDoc<T extends { id: string }>(record: T): Doc<T> {
  const { id, ...rest } = record;
  return { ...rest, _id: id } as Doc<T>;
}

function fromDoc<T extends { id: string }>(doc: Doc<T> | null): T | null {
  if (!doc) return null;
  const { _id, ...rest } = doc;
  return { ...rest, id: _id } as unknown as T;
}

export async function createMongoDocuments(client: MongoClient, dbName: string, options: MongoGrantsOptions = {}): Promise<Documents> {
  const db = client.db(dbName);
  await createIndexes(db);
  const grants = db.collection<GrantDoc>('grants');
  const ledger = db.collection<LedgerDoc>('ledger');
  const grantsStore = createMongoGrants(grants, ledger, options);
  return {
    accounts: createAccounts(db),
    keys: createKeys(db),
    grants: grantsStore,
    holds: createMongoHolds(grants, db.collection<BeatDoc>('process_beats')),
    outbox: createMongoOutbox(grants),
    ledger: createMongoLedger(ledger),
    clones: createClones(db),
    jobs: await createMongoJobs(db, { charge: grantsStore.charge, chargeQueued: chargeQueuedIn(grants) }),
    webhooks: await createMongoWebhooks(db),
    identity: await createMongoIdentity(db),
    spill: await createMongoSpill(db),
    async ping() {
      await db.command({ ping: 1 });
    },
    async close() {
      // The client is shared with other adapters (GridFS blobs); whoever connected it closes it.
    },
  };
}

async function createIndexes(db: Db): Promise<void> {
  await db.collection('api_keys').createIndexes([
    { key: { hash: 1 }, unique: true },
    { key: { accountId: 1, createdAt: 1 } },
  ]);
  await db.collection('cloned_voices').createIndex({ accountId: 1, createdAt: 1 });
  await createBillingIndexes(db);
}

function createAccounts(db: Db): AccountsStore {
  const accounts = db.collection<Doc<Account>>('accounts');
  return {
    async create(input) {
      const account: Account = {
        id: input.id,
        name: input.name,
        email: input.email ?? null,
        trialUsed: false,
        createdAt: input.createdAt,
      };
      await accounts.insertOne(toDoc(account));
      return account;
    },
    async get(id) {
      return fromDoc<Account>(await accounts.findOne({ _id: id }));
    },
    async claimTrial(id) {
      const res = await accounts.updateOne({ _id: id, trialUsed: false }, { $set: { trialUsed: true } });
      return res.modifiedCount === 1;
    },
  };
}

function createKeys(db: Db): KeysStore {
  const keys = db.collection<Doc<ApiKeyRecord>>('api_keys');
  return {
    async create(record) {
      await keys.insertOne(toDoc({ ...record, name: record.name ?? null, revokedAt: record.revokedAt ?? null, lastUsedAt: record.lastUsedAt ?? null }));
      return { ...record, lastUsedAt: record.lastUsedAt ?? null };
    },
    async findByHash(hash) {
      return withLastUse(fromDoc<ApiKeyRecord>(await keys.findOne({ hash })));
    },
    async get(id) {
      return withLastUse(fromDoc<ApiKeyRecord>(await keys.findOne({ _id: id })));
    },
    async listByAccount(accountId) {
      const docs = await keys.find({ accountId }).sort({ createdAt: 1, _id: 1 }).toArray();
      return docs.map((doc) => withLastUse(fromDoc<ApiKeyRecord>(doc)) as ApiKeyRecord);
    },
    async countActive(accountId) {
      return keys.countDocuments({ accountId, revokedAt: null });
    },
    async revoke(id, at) {
      const res = await keys.updateOne({ _id: id, revokedAt: null }, { $set: { revokedAt: at } });
      return res.modifiedCount === 1;
    },
    async touch(id, at) {
      // ISO instants order as strings, so $max keeps the latest use whatever order writes arrive in.
      await keys.updateOne({ _id: id }, { $max: { lastUsedAt: at } });
    },
  };
}

/** Keys stored before last use was recorded have no such field. */
function withLastUse(key: ApiKeyRecord | null): ApiKeyRecord | null {
  return key ? { ...key, lastUsedAt: key.lastUsedAt ?? null } : null;
}

function createClones(db: Db): ClonesStore {
  const clones = db.collection<Doc<ClonedVoice>>('cloned_voices');
  return {
    async create(voice) {
      await clones.insertOne(toDoc(voice));
      return { ...voice };
    },
    async get(id) {
      return fromDoc<ClonedVoice>(await clones.findOne({ _id: id }));
    },
    async listByAccount(accountId) {
      const docs = await clones.find({ accountId }).sort({ createdAt: 1, _id: 1 }).toArray();
      return docs.map((doc) => fromDoc<ClonedVoice>(doc) as ClonedVoice);
    },
  };
}
