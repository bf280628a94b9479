import type { Collection, Db, Document, Filter } from 'mongodb';
import type {
  ChargeCommand,
  Grant,
  GrantsStore,
  HoldsStore,
  LedgerEntry,
  RefundCommand,
} from '../../ports/documents.ts';
import { BEATS_KEPT_MS, chargeEntry, checkCharge, checkRefund, expiresAtMs } from './commands.ts';
import { perTurn, readsPerTurn } from '../../per-turn.ts';
import { DomainError } from '../../errors.ts';
import { UNREACHABLE_RETRY_SECONDS } from '../../unreachable.ts';

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

/** A charge whose request is still being answered by `instance` (ChargeCommand.holdFor). */
type HoldItem = LedgerEntry & { instance: string };

export type GrantDoc = Omit<Grant, 'id'> & {
  _id: string;
  expiresAtMs: number | null;
  outbox: OutboxItem[];
  /** charges already refunded, the refund's idempotency record */
  refundedCharges: string[];
  /** charges of requests still being answered, written by the charge's own update (absent when none ever was) */
  holds?: HoldItem[];
};

/** Which process is alive until when (HoldsStore.beat). */
export type BeatDoc = { _id: string; untilMs: number };

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

/**
 * Most entries a grant's outbox array may hold. The array drains only as
 * the relay hands entries to the bus, so while the bus is down every charge
 * on the grant grows it, and accepts go on meanwhile: at 500 charges a
 * second on one grant, a broker outage of about 80 s would reach MongoDB's
 * 16 MB document limit (entries are about 400 bytes), after which every
 * charge on the grant failed with a 500, and long before it each charge
 * rewrote a document of megabytes. At the limit (about 4 MB) a charge is
 * refused with 503 and nothing is charged, until the relay catches up;
 * refunds are never refused.
 */
export const OUTBOX_LIMIT = 10_000;

export interface MongoGrantsOptions {
  /** OUTBOX_LIMIT unless given (tests use a small one) */
  outboxLimit?: number;
}

function ledgerBacklog(): DomainError {
  return new DomainError('unavailable', 'This grant cannot take more charges until the event bus takes its pending ledger entries (the bus is behind or unreachable). Nothing was charged; retry in a few seconds.', {
    code: 'SERVICE_UNAVAILABLE', retryAfterSeconds: UNREACHABLE_RETRY_SECONDS,
  });
}

const GRANT_PROJECTION = { outbox: 0, refundedCharges: 0, expiresAtMs: 0, holds: 0 } as const;

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
export interface Windows {
  day: boolean;
  week: boolean;
}

const windowsOf = (grant: Pick<Grant, 'dayKey' | 'weekKey'>, cmd: ChargeCommand): Windows =>
  ({ day: grant.dayKey === cmd.dayKey, week: grant.weekKey === cmd.weekKey });

/** `cap` is unset or `used` (an expression) plus the charge stays within it. */
function capHolds(capField: string, used: Document | number): Document {
  return { $or: [{ $eq: [{ $ifNull: [capField, null] }, null] }, { $lte: [used, capField] }] };
}

/** What the charge filter asks of the grant, on a grant as read: whether the charge would land on it. */
export function canPay(grant: Grant, cmd: Pick<ChargeCommand, 'tokens'>, nowMs: number, windows: Windows): boolean {
  const expiresMs = grant.expiresAt === null ? null : expiresAtMs(grant.expiresAt);
  const dayUsed = (windows.day ? grant.dayUsed : 0) + cmd.tokens;
  const weekUsed = (windows.week ? grant.weekUsed : 0) + cmd.tokens;
  return grant.status === 'active' && (expiresMs === null || expiresMs > nowMs) &&
    grant.totalTokens - grant.usedTokens >= cmd.tokens &&
    (grant.dailyCap === null || dayUsed <= grant.dailyCap) && (grant.weeklyCap === null || weekUsed <= grant.weeklyCap);
}

/**
 * One conditional write of a grant: the charges in it (one, or several of
 * the same turn and cap windows) land together or not at all.
 */
interface ChargeWrite {
  grantId: string;
  dayKey: string;
  weekKey: string;
  /** the charges' ledger entries, in the order they are counted */
  entries: LedgerEntry[];
  /** holds written with them (the entries of the charges that asked for one) */
  holds: HoldItem[];
  /** their tokens together */
  tokens: number;
  /** the latest of the charges' times: a grant unexpired then is unexpired for each */
  nowMs: number;
}

const holdsOf = (cmds: readonly ChargeCommand[]): HoldItem[] =>
  cmds.flatMap((cmd) => (cmd.holdFor ? [{ ...chargeEntry(cmd), instance: cmd.holdFor }] : []));

const writeOf = (cmd: ChargeCommand, nowMs: number): ChargeWrite =>
  ({ grantId: cmd.grantId, dayKey: cmd.dayKey, weekKey: cmd.weekKey, entries: [chargeEntry(cmd)], holds: holdsOf([cmd]), tokens: cmd.tokens, nowMs });

function chargeFilter(write: ChargeWrite, windows: Windows, outboxLimit: number): Filter<GrantDoc> {
  const { tokens } = write;
  return {
    _id: write.grantId,
    status: 'active',
    // room in the outbox for every entry of the write
    [`outbox.${Math.max(0, outboxLimit - write.entries.length)}`]: { $exists: false },
    $or: [{ expiresAtMs: null }, { expiresAtMs: { $gt: write.nowMs } }],
    // a retried entry id must not be counted twice
    'outbox.id': write.entries.length === 1 ? { $ne: write.entries[0].id } : { $nin: write.entries.map((e) => e.id) },
    dayKey: windows.day ? write.dayKey : { $ne: write.dayKey },
    weekKey: windows.week ? write.weekKey : { $ne: write.weekKey },
    $expr: {
      $and: [
        { $gte: [{ $subtract: ['$totalTokens', '$usedTokens'] }, tokens] },
        capHolds('$dailyCap', windows.day ? { $add: ['$dayUsed', tokens] } : tokens),
        capHolds('$weeklyCap', windows.week ? { $add: ['$weekUsed', tokens] } : tokens),
      ],
    },
  };
}

function chargeUpdate(write: ChargeWrite, windows: Windows): Document {
  const { tokens } = write;
  const inc: Document = { usedTokens: tokens };
  const set: Document = {};
  if (windows.day) inc.dayUsed = tokens;
  else Object.assign(set, { dayKey: write.dayKey, dayUsed: tokens });
  if (windows.week) inc.weekUsed = tokens;
  else Object.assign(set, { weekKey: write.weekKey, weekUsed: tokens });
  const queuedAt = new Date();
  const items = write.entries.map((entry) => ({ ...entry, queuedAt }));
  const push: Document = { outbox: items.length === 1 ? items[0] : { $each: items } };
  if (write.holds.length > 0) push.holds = { $each: write.holds };
  const update: Document = { $inc: inc, $push: push };
  if (Object.keys(set).length > 0) update.$set = set;
  return update;
}

/**
 * The grant as each charge of a write that landed left it: the write's
 * result less what the charges counted after it added (all of them counted
 * in the grant's current windows).
 */
export function grantsAfterEach(after: Grant, write: Pick<ChargeWrite, 'entries'>): Grant[] {
  let later = 0;
  const grants: Grant[] = [];
  for (let i = write.entries.length - 1; i >= 0; i--) {
    grants[i] = { ...after, usedTokens: after.usedTokens - later, dayUsed: after.dayUsed - later, weekUsed: after.weekUsed - later, engines: [...after.engines] };
    later += write.entries[i].tokens;
  }
  return grants;
}

/** What a charge's try with the other charges of its turn came to. */
type TurnCharge =
  | { landed: Grant }
  /** the write failed: whether it landed is unknown, as with a charge's own write */
  | { failed: unknown }
  /** `alone`: it was the only one, so its own first plan has been tried */
  | { landed: null; alone: boolean };

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

export function createMongoGrants(grants: Collection<GrantDoc>, ledger: Collection<LedgerDoc>, options: MongoGrantsOptions = {}): GrantsStore {
  const outboxLimit = Math.max(1, options.outboxLimit ?? OUTBOX_LIMIT);
  const outboxFull = async (grantId: string) =>
    (await grants.countDocuments({ _id: grantId, [`outbox.${outboxLimit - 1}`]: { $exists: true } }, { limit: 1 })) > 0;
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
  const chargeOnce = async (write: ChargeWrite, windows: Windows): Promise<Grant | null> => {
    const after = await grants.findOneAndUpdate(chargeFilter(write, windows, outboxLimit), chargeUpdate(write, windows), {
      returnDocument: 'after',
      projection: GRANT_PROJECTION,
    });
    return after ? toGrant(after) : null;
  };
  /*
   * Every charge rewrites its grant's document, outbox included, so a burst
   * of requests on one account would queue on that document. The charges of
   * one turn on one grant, in its current cap windows, go as ONE conditional
   * write of their sum: it lands whole or not at all, and when it does not,
   * each charge tries alone, so none is refused because of the others.
   */
  const chargeInTurn = perTurn<{ cmd: ChargeCommand; nowMs: number }, TurnCharge>(async (calls) => {
    const groups = new Map<string, Array<{ cmd: ChargeCommand; nowMs: number; at: number }>>();
    calls.forEach(({ cmd, nowMs }, at) => {
      const key = `${cmd.grantId}\u0000${cmd.dayKey}\u0000${cmd.weekKey}`;
      const group = groups.get(key);
      // The same entry twice (a retry) is left to try alone: its id may be counted once only.
      if (group?.some((c) => c.cmd.entry.id === cmd.entry.id)) groups.set(`${key}\u0000${at}`, [{ cmd, nowMs, at }]);
      else if (group) group.push({ cmd, nowMs, at });
      else groups.set(key, [{ cmd, nowMs, at }]);
    });
    const answers: TurnCharge[] = [];
    await Promise.all([...groups.values()].map(async (group) => {
      const { grantId, dayKey, weekKey } = group[0].cmd;
      const write: ChargeWrite = {
        grantId, dayKey, weekKey,
        entries: group.map((c) => chargeEntry(c.cmd)),
        holds: holdsOf(group.map((c) => c.cmd)),
        tokens: group.reduce((sum, c) => sum + c.cmd.tokens, 0),
        nowMs: Math.max(...group.map((c) => c.nowMs)),
      };
      let answer: (i: number) => TurnCharge;
      try {
        const after = await chargeOnce(write, { day: true, week: true });
        const each = after ? grantsAfterEach(after, write) : null;
        answer = (i) => (each ? { landed: each[i] } : { landed: null, alone: group.length === 1 });
      } catch (failed) {
        // Only this group's charges fail: another grant's write may have landed.
        answer = () => ({ failed });
      }
      group.forEach((c, i) => (answers[c.at] = answer(i)));
    }));
    return answers;
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
      // Most charges land in the grant's current windows: planned for that, with the turn's other charges of the grant.
      const together = await chargeInTurn({ cmd, nowMs });
      if ('failed' in together) throw together.failed;
      if (together.landed) return { ok: true, grant: together.landed };
      let windows: Windows = { day: true, week: true };
      // A group that missed says nothing of each charge in it: each tries alone, from the same plan.
      let planTried = together.alone;
      for (let plan = 0; plan < MAX_PLANS; plan++) {
        if (!planTried) {
          const after = await chargeOnce(writeOf(cmd, nowMs), windows);
          if (after) return { ok: true, grant: after };
        }
        planTried = false;
        const fresh = await read(cmd.grantId);
        if (!fresh) return { ok: false, grant: null };
        const now = windowsOf(fresh, cmd);
        // The plan matches the grant as read, and the grant as read cannot pay: refused. (A grant that can pay
        // as read was changed between the write and the read, e.g. another charge opened the day's window.)
        if (now.day === windows.day && now.week === windows.week && !canPay(fresh, cmd, nowMs, now)) return { ok: false, grant: fresh };
        // A grant that can pay missed for another reason: a race, or an outbox with no room left.
        if (await outboxFull(cmd.grantId)) throw ledgerBacklog();
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

/**
 * Holds live in their grant's document, pushed by the charge's own update,
 * so a charge and its hold land together; beats are a small collection of
 * their own.
 */
export function createMongoHolds(grants: Collection<GrantDoc>, beats: Collection<BeatDoc>): HoldsStore {
  return {
    async release(holds) {
      const byGrant = new Map<string, string[]>();
      for (const { grantId, chargeId } of holds) byGrant.set(grantId, [...(byGrant.get(grantId) ?? []), chargeId]);
      await Promise.all([...byGrant].map(([grantId, ids]) => grants.updateOne({ _id: grantId }, { $pull: { holds: { id: { $in: ids } } } })));
    },
    async beat(instance, untilMs) {
      await beats.updateOne({ _id: instance }, { $set: { untilMs } }, { upsert: true });
      // A process gone a day is forgotten: its holds, if any, are orphans either way.
      await beats.deleteMany({ untilMs: { $lt: untilMs - BEATS_KEPT_MS } });
    },
    async orphaned(nowMs, limit) {
      if (limit <= 0) return [];
      const live = new Set((await beats.find({ untilMs: { $gt: nowMs } }, { projection: { _id: 1 } }).toArray()).map((b) => b._id));
      // The processes holding anything, read from the holds index (a scan of every grant for a $nin would not use it).
      const dead = (await grants.distinct('holds.instance')).filter((instance) => !live.has(instance));
      if (dead.length === 0) return [];
      const docs = await grants.find({ 'holds.instance': { $in: dead } }, { projection: { holds: 1 } }).toArray();
      const orphans: LedgerEntry[] = [];
      for (const doc of docs) {
        for (const { instance, ...entry } of doc.holds ?? []) if (!live.has(instance)) orphans.push(entry);
      }
      return orphans.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0)).slice(0, limit);
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
    // only grants paying for requests being answered right now carry holds
    { key: { 'holds.instance': 1 }, sparse: true },
  ]);
  await db.collection('ledger').createIndex({ grantId: 1, at: 1 });
}
