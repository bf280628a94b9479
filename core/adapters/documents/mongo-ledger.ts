import { MongoServerError, type Collection, type Document, type Filter } from 'mongodb';
import type { LedgerEntry, LedgerStore, OutboxStore } from '../../ports/documents.ts';
import type { GrantDoc, LedgerDoc } from './mongo-billing.ts';
import { DUPLICATE_KEY } from './mongo-bulk-per-turn.ts';

/**
 * The outbox (entries queued inside grant documents by charges and refunds,
 * see mongo-billing.ts) and the ledger they are published to. Appends are
 * idempotent on the entry id, the ledger's `_id`.
 */

function toEntry(doc: Document): LedgerEntry {
  const { _id, queuedAt: _queuedAt, ...rest } = doc;
  return { id: doc.id ?? _id, ...rest } as LedgerEntry;
}

export function createMongoOutbox(grants: Collection<GrantDoc>): OutboxStore {
  return {
    async pending(limit) {
      if (limit <= 0) return [];
      const items = await grants
        .aggregate([
          { $match: { 'outbox.queuedAt': { $exists: true } } },
          { $project: { outbox: 1 } },
          // queuedAt is the writer's clock (ms): ties fall back to the grant, then to the order of its array.
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
        if (err instanceof MongoServerError && err.code === DUPLICATE_KEY) return false;
        throw err;
      }
    },
    async sumByGrant(grantId, window) {
      // Entry times are ISO 8601 strings of one format, so they compare as strings (index grantId, at).
      const match: Filter<LedgerDoc> = window ? { grantId, at: { $gte: window.from, $lt: window.to } } : { grantId };
      if (window?.exceptRoutes?.length) match.route = { $nin: [...window.exceptRoutes] };
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
