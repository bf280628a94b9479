import type { Collection, Db, Document, Filter } from 'mongodb';
import type {
  ChargeCommand,
  Grant,
  GrantsStore,
  LedgerEntry,
  RefundCommand,
} from '../../ports/documents.ts';
import { chargeEntry, checkCharge, checkRefund, expiresAtMs } from './commands.ts';
import { readsPerTurn } from '../per-turn.ts';

/**
 * Grants, outbox and ledger on MongoDB without multi-document transactions
 * (they need a replica set). Each charge or refund is ONE conditional
 * findOneAndUpdate of the grant document that also pushes the ledger entry
 * into the grant's own `outbox` array, so single-document atomicity is the
 * outbox. Only classic update operators ($inc, $set, $push) are used, no
 * update pipelines: the filter pins the state the update was written for
 * (which cap windows are current, what is left), and a write whose pinned
 * state moved on is re-planned from a fresh read.
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

/*
 * Re-plans of one write. A plan goes stale only when a cap window rolls over
 * or a refund races a change of the numbers it read, so a few are plenty; a
 * charge that still has not landed is refused like a lost race (the billing
 * code answers CONCURRENT_CONFLICT when no grant can be charged).
 */
const MAX_PLANS = 5;

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

/** Which cap windows of the grant are the command's own (the others roll over with the charge). */
interface Windows {
  day: boolean;
  week: boolean;
}

const windowsOf = (grant: Pick<Grant, 'dayKey' | 'weekKey'>, cmd: ChargeCommand): Windows =>
  ({ day: grant.dayKey === cmd.dayKey, week: grant.weekKey === cmd.weekKey });

/** `cap` is unset or `used` (an expression) plus the charge stays within it. */
function capHolds(capField: string, used: Document | number): Document {
  return { $or: [{ $eq: [{ $ifNull: [capField, null] }, null] }, { $lte: [used, capField] }] };
}

function chargeFilter(cmd: ChargeCommand, nowMs: number, windows: Windows): Filter<GrantDoc> {
  const { tokens } = cmd;
  return {
    _id: cmd.grantId,
    status: 'active',
    $or: [{ expiresAtMs: null }, { expiresAtMs: { $gt: nowMs } }],
    // a retried entry id must not be counted twice
    'outbox.id': { $ne: cmd.entry.id },
    dayKey: windows.day ? cmd.dayKey : { $ne: cmd.dayKey },
    weekKey: windows.week ? cmd.weekKey : { $ne: cmd.weekKey },
    $expr: {
      $and: [
        { $gte: [{ $subtract: ['$totalTokens', '$usedTokens'] }, tokens] },
        capHolds('$dailyCap', windows.day ? { $add: ['$dayUsed', tokens] } : tokens),
        capHolds('$weeklyCap', windows.week ? { $add: ['$weekUsed', tokens] } : tokens),
      ],
    },
  };
}

function chargeUpdate(cmd: ChargeCommand, windows: Windows): Document {
  const { tokens } = cmd;
  const inc: Document = { usedTokens: tokens };
  const set: Document = {};
  if (windows.day) inc.dayUsed = tokens;
  else Object.assign(set, { dayKey: cmd.dayKey, dayUsed: tokens });
  if (windows.week) inc.weekUsed = tokens;
  else Object.assign(set, { weekKey: cmd.weekKey, weekUsed: tokens });
  const update: Document = { $inc: inc, $push: { outbox: { ...chargeEntry(cmd), queuedAt: new Date() } } };
  if (Object.keys(set).length > 0) update.$set = set;
  return update;
}

/** The charge's size from the grant's outbox while it is still queued there. */
function queuedChargeTokens(doc: Pick<GrantDoc, 'outbox'>, chargeId: string): number | null {
  const found = (doc.outbox ?? []).find((e) => e.kind === 'charge' && (e.id === chargeId || e.chargeId === chargeId));
  return found?.tokens ?? null;
}

type RefundRead = Pick<GrantDoc, '_id' | 'usedTokens' | 'dayKey' | 'dayUsed' | 'weekKey' | 'weekUsed' | 'outbox'>;

/**
 * The refund's write, planned from one read of the grant: the tokens are the
 * smallest of the asked amount, what the grant has used and the charge
 * itself; they go back to a cap window only while it is the one the charge
 * was counted in (clamped at zero). The filter pins each number the plan used.
 */
function refundPlan(cmd: RefundCommand, doc: RefundRead, ledgerTokens: number | null): { filter: Filter<GrantDoc>; update: Document } | null {
  const { entry } = cmd;
  const charged = queuedChargeTokens(doc, entry.chargeId) ?? ledgerTokens ?? cmd.tokens;
  const tokens = Math.min(cmd.tokens, doc.usedTokens, charged);
  if (tokens <= 0) return null;
  const filter: Filter<GrantDoc> = { _id: cmd.grantId, refundedCharges: { $ne: entry.chargeId } };
  filter.usedTokens = tokens === doc.usedTokens ? doc.usedTokens : { $gte: tokens };
  const inc: Document = { usedTokens: -tokens };
  const set: Document = {};
  const windows = [
    { key: 'dayKey', used: 'dayUsed', entryKey: entry.dayKey ?? null },
    { key: 'weekKey', used: 'weekUsed', entryKey: entry.weekKey ?? null },
  ] as const;
  for (const w of windows) {
    if (w.entryKey === null) continue;
    if (doc[w.key] !== w.entryKey) {
      filter[w.key] = { $ne: w.entryKey };
      continue;
    }
    filter[w.key] = w.entryKey;
    const used = doc[w.used] ?? 0;
    if (used >= tokens) {
      filter[w.used] = { $gte: tokens };
      inc[w.used] = -tokens;
    } else {
      filter[w.used] = used;
      set[w.used] = 0;
    }
  }
  const update: Document = {
    $inc: inc,
    $push: {
      refundedCharges: { $each: [entry.chargeId], $slice: -REFUNDED_CHARGES_KEPT },
      outbox: { ...entry, tokens, queuedAt: new Date() },
    },
  };
  if (Object.keys(set).length > 0) update.$set = set;
  return { filter, update };
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
  // Every POST /tts and GET /balance reads its account's active grants: those of one turn go out as one query.
  const activeOf = readsPerTurn<string, Grant[]>(async (accountIds) => {
    const byAccount = new Map(accountIds.map((id): [string, Grant[]] => [id, []]));
    for (const grant of await list({ accountId: { $in: accountIds }, status: 'active' })) byAccount.get(grant.accountId)?.push(grant);
    return byAccount;
  });
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
    listActive: async (accountId) => (await activeOf(accountId)) ?? [],
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
      // Most charges land in the grant's current windows: plan for that first, read only when it missed.
      let windows: Windows = { day: true, week: true };
      for (let plan = 0; plan < MAX_PLANS; plan++) {
        const after = await grants.findOneAndUpdate(chargeFilter(cmd, nowMs, windows), chargeUpdate(cmd, windows), {
          returnDocument: 'after',
          projection: GRANT_PROJECTION,
        });
        if (after) return { ok: true, grant: toGrant(after) };
        const fresh = await read(cmd.grantId);
        if (!fresh) return { ok: false, grant: null };
        const now = windowsOf(fresh, cmd);
        // The plan matched the grant's windows, so a condition refused it: the grant cannot pay.
        if (now.day === windows.day && now.week === windows.week) return { ok: false, grant: fresh };
        windows = now;
      }
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
      for (let plan = 0; plan < MAX_PLANS; plan++) {
        const doc = await grants.findOne(
          { _id: cmd.grantId, refundedCharges: { $ne: chargeId } },
          { projection: { usedTokens: 1, dayKey: 1, dayUsed: 1, weekKey: 1, weekUsed: 1, outbox: 1 } },
        );
        if (!doc) return { applied: false };
        const write = refundPlan(cmd, doc, published?.tokens ?? null);
        if (!write) return { applied: false };
        const res = await grants.updateOne(write.filter, write.update);
        if (res.matchedCount === 1) return { applied: true };
      }
      throw new Error(`refund of ${chargeId} kept racing other writes to grant ${cmd.grantId}`);
    },
  };
}

/** Whether a charge entry still waits in the outbox of one of the account's grants (it left once published). */
export function chargeQueuedIn(grants: Collection<GrantDoc>): (accountId: string, chargeId: string) => Promise<boolean> {
  return async (accountId, chargeId) => (await grants.findOne({ accountId, 'outbox.id': chargeId }, { projection: { _id: 1 } })) !== null;
}

export async function createBillingIndexes(db: Db): Promise<void> {
  await db.collection('grants').createIndexes([
    { key: { accountId: 1, createdAt: 1 } },
    // only grants with unpublished entries carry queuedAt values, keeping the outbox scan small
    { key: { 'outbox.queuedAt': 1 }, sparse: true },
  ]);
  await db.collection('ledger').createIndex({ grantId: 1, at: 1 });
}
