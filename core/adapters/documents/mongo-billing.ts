import { MongoServerError, type Collection, type Db, type Document, type Filter } from 'mongodb';
import type {
  ChargeCommand,
  Grant,
  GrantsStore,
  LedgerEntry,
  LedgerStore,
  OutboxStore,
  RefundCommand,
} from '../../ports/documents.ts';
import { chargeEntry, checkCharge, checkRefund, expiresAtMs } from './commands.ts';

/**
 * Grants, outbox and ledger on MongoDB without multi-document transactions
 * (they need a replica set). Each charge or refund is ONE findOneAndUpdate of
 * the grant document: its filter carries every condition, its update is a
 * pipeline that rolls the cap windows over and appends the ledger entry to
 * the grant's own `outbox` array, so single-document atomicity is the outbox.
 */

type OutboxItem = LedgerEntry & { queuedAt: Date };

export type GrantDoc = Omit<Grant, 'id'> & {
  _id: string;
  expiresAtMs: number | null;
  outbox: OutboxItem[];
  /** charges already refunded, the refund's idempotency record */
  refundedCharges: string[];
};

export type LedgerDoc = Omit<LedgerEntry, 'id'> & { _id: string };

/*
 * Refunds follow failures within minutes of their charge; keeping the latest
 * ones bounds the grant document (16 MB limit) however long the grant lives.
 */
const REFUNDED_CHARGES_KEPT = 20_000;

const GRANT_PROJECTION = { outbox: 0, refundedCharges: 0, expiresAtMs: 0 } as const;

export function toGrant(doc: Document): Grant {
  return {
    id: doc._id, accountId: doc.accountId, plan: doc.plan,
    totalTokens: doc.totalTokens, usedTokens: doc.usedTokens,
    dailyCap: doc.dailyCap ?? null, weeklyCap: doc.weeklyCap ?? null,
    dayKey: doc.dayKey ?? null, dayUsed: doc.dayUsed ?? 0,
    weekKey: doc.weekKey ?? null, weekUsed: doc.weekUsed ?? 0,
    expiresAt: doc.expiresAt ?? null, isGift: doc.isGift === true,
    engines: doc.engines ?? [], status: doc.status, createdAt: doc.createdAt,
  };
}

function toEntry(doc: Document): LedgerEntry {
  const { _id, queuedAt: _queuedAt, ...rest } = doc;
  return { id: doc.id ?? _id, ...rest } as LedgerEntry;
}

/** Tokens the grant has counted in window `key`: nothing once the window rolled over. */
function windowUsed(keyField: string, usedField: string, key: string): Document {
  return { $cond: [{ $eq: [keyField, { $literal: key }] }, usedField, 0] };
}

function capHolds(capField: string, keyField: string, usedField: string, key: string, tokens: number): Document {
  return {
    $or: [
      { $eq: [{ $ifNull: [capField, null] }, null] },
      { $lte: [{ $add: [windowUsed(keyField, usedField, key), tokens] }, capField] },
    ],
  };
}

function appendOutbox(item: Document): Document {
  return { $concatArrays: [{ $ifNull: ['$outbox', []] }, [item]] };
}

function chargeFilter(cmd: ChargeCommand, nowMs: number): Filter<GrantDoc> {
  return {
    _id: cmd.grantId,
    status: 'active',
    $or: [{ expiresAtMs: null }, { expiresAtMs: { $gt: nowMs } }],
    // a retried entry id must not be counted twice
    'outbox.id': { $ne: cmd.entry.id },
    $expr: {
      $and: [
        { $gte: [{ $subtract: ['$totalTokens', '$usedTokens'] }, cmd.tokens] },
        capHolds('$dailyCap', '$dayKey', '$dayUsed', cmd.dayKey, cmd.tokens),
        capHolds('$weeklyCap', '$weekKey', '$weekUsed', cmd.weekKey, cmd.tokens),
      ],
    },
  };
}

function chargeUpdate(cmd: ChargeCommand): Document[] {
  const { tokens } = cmd;
  // One $set stage evaluates every field against the document as it was, so the old window keys are read.
  return [{
    $set: {
      usedTokens: { $add: ['$usedTokens', tokens] },
      dayUsed: { $add: [windowUsed('$dayKey', '$dayUsed', cmd.dayKey), tokens] },
      dayKey: { $literal: cmd.dayKey },
      weekUsed: { $add: [windowUsed('$weekKey', '$weekUsed', cmd.weekKey), tokens] },
      weekKey: { $literal: cmd.weekKey },
      outbox: appendOutbox({ $mergeObjects: [{ $literal: chargeEntry(cmd) }, { queuedAt: '$$NOW' }] }),
    },
  }];
}

/** Size of the refunded charge: from the grant's outbox when still there, else from the ledger read before. */
function chargedTokens(chargeId: string, fallback: number): Document {
  const id = { $literal: chargeId };
  return {
    $let: {
      vars: {
        found: {
          $filter: {
            input: { $ifNull: ['$outbox', []] },
            as: 'e',
            cond: {
              $and: [
                { $eq: ['$$e.kind', 'charge'] },
                { $or: [{ $eq: ['$$e.id', id] }, { $eq: ['$$e.chargeId', id] }] },
              ],
            },
          },
        },
      },
      in: { $ifNull: [{ $arrayElemAt: ['$$found.tokens', 0] }, fallback] },
    },
  };
}

/** Tokens go back to a cap window only while it is still the grant's current one. */
function returnToWindow(keyField: string, usedField: string, key: string | null): Document | string {
  if (key === null) return usedField;
  return {
    $cond: [
      { $eq: [keyField, { $literal: key }] },
      { $max: [0, { $subtract: [usedField, '$refundTokens'] }] },
      usedField,
    ],
  };
}

function refundUpdate(cmd: RefundCommand, ledgerTokens: number | null): Document[] {
  const { entry } = cmd;
  return [
    { $set: { refundTokens: { $min: [cmd.tokens, '$usedTokens', chargedTokens(entry.chargeId, ledgerTokens ?? cmd.tokens)] } } },
    {
      $set: {
        usedTokens: { $subtract: ['$usedTokens', '$refundTokens'] },
        dayUsed: returnToWindow('$dayKey', '$dayUsed', entry.dayKey ?? null),
        weekUsed: returnToWindow('$weekKey', '$weekUsed', entry.weekKey ?? null),
        refundedCharges: {
          $slice: [{ $concatArrays: [{ $ifNull: ['$refundedCharges', []] }, [{ $literal: entry.chargeId }]] }, -REFUNDED_CHARGES_KEPT],
        },
        outbox: appendOutbox({
          $mergeObjects: [{ $literal: entry }, { tokens: '$refundTokens', queuedAt: '$$NOW' }],
        }),
      },
    },
    { $unset: 'refundTokens' },
  ];
}

export function createMongoGrants(grants: Collection<GrantDoc>, ledger: Collection<LedgerDoc>): GrantsStore {
  const read = async (id: string): Promise<Grant | null> => {
    const doc = await grants.findOne({ _id: id }, { projection: GRANT_PROJECTION });
    return doc ? toGrant(doc) : null;
  };
  const list = async (filter: Filter<GrantDoc>): Promise<Grant[]> => {
    const docs = await grants.find(filter, { projection: GRANT_PROJECTION }).sort({ createdAt: 1, _id: 1 }).toArray();
    return docs.map(toGrant);
  };
  return {
    async create(grant) {
      const { id, ...rest } = grant;
      const doc: GrantDoc = {
        ...rest, _id: id, engines: [...grant.engines],
        expiresAtMs: expiresAtMs(grant.expiresAt), outbox: [], refundedCharges: [],
      };
      await grants.insertOne(doc);
      return { ...grant, engines: [...grant.engines] };
    },
    get: read,
    listActive: (accountId) => list({ accountId, status: 'active' }),
    listByAccount: (accountId) => list({ accountId }),
    async listPage(afterId, limit) {
      if (limit <= 0) return [];
      const filter: Filter<GrantDoc> = afterId === null ? {} : { _id: { $gt: afterId } };
      const docs = await grants.find(filter, { projection: GRANT_PROJECTION }).sort({ _id: 1 }).limit(limit).toArray();
      return docs.map(toGrant);
    },
    async setStatus(id, status) {
      await grants.updateOne({ _id: id }, { $set: { status } });
    },
    async charge(cmd) {
      const nowMs = checkCharge(cmd);
      const after = await grants.findOneAndUpdate(chargeFilter(cmd, nowMs), chargeUpdate(cmd), {
        returnDocument: 'after',
        projection: GRANT_PROJECTION,
      });
      if (after) return { ok: true, grant: toGrant(after) };
      return { ok: false, grant: await read(cmd.grantId) };
    },
    async refund(cmd) {
      checkRefund(cmd);
      const { chargeId } = cmd.entry;
      // Charge entries are immutable, so reading one outside the update is safe.
      const published = await ledger.findOne(
        { grantId: cmd.grantId, kind: 'charge', $or: [{ _id: chargeId }, { chargeId }] },
        { projection: { tokens: 1 } },
      );
      const after = await grants.findOneAndUpdate(
        { _id: cmd.grantId, refundedCharges: { $ne: chargeId }, usedTokens: { $gt: 0 } },
        refundUpdate(cmd, published?.tokens ?? null),
        { projection: { _id: 1 } },
      );
      return { applied: after !== null };
    },
  };
}

export function createMongoOutbox(grants: Collection<GrantDoc>): OutboxStore {
  return {
    async pending(limit) {
      if (limit <= 0) return [];
      const items = await grants
        .aggregate([
          { $match: { 'outbox.queuedAt': { $exists: true } } },
          { $project: { outbox: 1 } },
          // $$NOW has millisecond resolution: ties fall back to the grant, then to the order of its array.
          { $unwind: { path: '$outbox', includeArrayIndex: 'position' } },
          { $sort: { 'outbox.queuedAt': 1, _id: 1, position: 1 } },
          { $limit: limit },
          { $replaceRoot: { newRoot: '$outbox' } },
        ])
        .toArray();
      return items.map(toEntry);
    },
    async markPublished(ids) {
      if (ids.length === 0) return;
      await grants.updateMany({ 'outbox.id': { $in: ids } }, { $pull: { outbox: { id: { $in: ids } } } });
    },
  };
}

export function createMongoLedger(ledger: Collection<LedgerDoc>): LedgerStore {
  return {
    async append(entry) {
      const { id, ...rest } = entry;
      try {
        await ledger.insertOne({ ...rest, _id: id });
        return true;
      } catch (err) {
        if (err instanceof MongoServerError && err.code === 11000) return false;
        throw err;
      }
    },
    async sumByGrant(grantId, window) {
      // Entry times are ISO 8601 strings of one format, so they compare as strings (index grantId, at).
      const match: Filter<LedgerDoc> = window ? { grantId, at: { $gte: window.from, $lt: window.to } } : { grantId };
      const [row] = await ledger
        .aggregate<{ charged: number; refunded: number; entries: number }>([
          { $match: match },
          {
            $group: {
              _id: null,
              charged: { $sum: { $cond: [{ $eq: ['$kind', 'charge'] }, '$tokens', 0] } },
              refunded: { $sum: { $cond: [{ $eq: ['$kind', 'refund'] }, '$tokens', 0] } },
              entries: { $sum: 1 },
            },
          },
          { $project: { _id: 0 } },
        ])
        .toArray();
      return row ?? { charged: 0, refunded: 0, entries: 0 };
    },
    async listByGrant(grantId) {
      const docs = await ledger.find({ grantId }).sort({ at: 1, _id: 1 }).toArray();
      return docs.map(toEntry);
    },
  };
}

export async function createBillingIndexes(db: Db): Promise<void> {
  await db.collection('grants').createIndexes([
    { key: { accountId: 1, createdAt: 1 } },
    // only grants with unpublished entries carry queuedAt values, keeping the outbox scan small
    { key: { 'outbox.queuedAt': 1 }, sparse: true },
  ]);
  await db.collection('ledger').createIndex({ grantId: 1, at: 1 });
}
