import type { AnyBulkWriteOperation, Db } from 'mongodb';
import type { QueueLimits } from '../../ports/jobs.ts';
import { DUPLICATE_KEY, unorderedBulkPerTurn } from './mongo-bulk-per-turn.ts';

/**
 * Queue depth counters on MongoDB (`tts_queue_slots`): one document for the
 * whole queue (`*`) and one per account with jobs in the queue, taken when a
 * job is accepted and given back when it ends.
 *
 * Both counters are taken in ONE `update` command (shared with the other
 * reservations of the same turn, mongo-bulk-per-turn.ts): for each, an upsert that
 * creates it at 0 if missing, then a conditional increment (`n < limit`)
 * with upsert. A full counter does not match, so its upsert collides on
 * `_id`: that duplicate-key error is the refusal. The statements run
 * unordered (every one is tried, on MongoDB and on the wire-compatible test
 * server alike, which does not stop an ordered batch either), and a refused
 * attempt gives back what it took. The counters have a collection of their
 * own, kept small: a few documents, whatever the server's query planner.
 *
 * A job holds its slots while it carries `slot: true`; whoever removes that
 * flag (the job ending, or a dropped submission) gives the slots back, so
 * they are given back at most once. A process that dies between those two
 * writes leaves a counter off; `heal` compares the counters with the jobs
 * that hold slots and corrects a difference seen in two consecutive runs
 * (one run could catch a submission between its writes).
 */

export const GLOBAL_SLOTS = '*';

interface SlotDoc {
  _id: string;
  n: number;
}

/** Attempts of a reservation refused by a counter that was no longer full when read again. */
const RESERVE_TRIES = 4;

export type QueueRefusal = 'depth' | 'account';

export interface QueueSlots {
  /** Takes a slot of the queue and one of the account, within `limits` (unconditionally when null); the limit that refused it, or null. */
  reserve(accountId: string, limits: QueueLimits | null): Promise<QueueRefusal | null>;
  release(accountId: string): Promise<void>;
  /** corrects counters that drifted from the jobs holding slots; returns how many counters it changed */
  heal(): Promise<number>;
}

/** `jobsCollection`: where the jobs holding slots (`slot: true`) are, for `heal`. */
export function createQueueSlots(db: Db, jobsCollection: string): QueueSlots {
  const jobs = db.collection<{ _id: string; accountId: string; slot?: true }>(jobsCollection);
  const slots = db.collection<SlotDoc>('tts_queue_slots');
  const take = (id: string, limit: number | null): AnyBulkWriteOperation<SlotDoc> => ({
    updateOne: { filter: limit === null ? { _id: id } : { _id: id, n: { $lt: limit } }, update: { $inc: { n: 1 } }, upsert: true },
  });
  // Creates a missing counter at 0 before it is taken, so that a collision of `take` means full, not "created meanwhile".
  const ensure = (id: string): AnyBulkWriteOperation<SlotDoc> => ({
    updateOne: { filter: { _id: id }, update: { $setOnInsert: { n: 0 } }, upsert: true },
  });
  const giveBack = async (ids: string[]) => {
    if (ids.length === 0) return;
    await slots.bulkWrite(ids.map((id) => ({ updateOne: { filter: { _id: id, n: { $gt: 0 } }, update: { $inc: { n: -1 } } } })), { ordered: false });
  };
  const isFull = async (id: string, limit: number | null) => {
    if (limit === null) return false;
    const doc = await slots.findOne({ _id: id }, { projection: { n: 1 } });
    return (doc?.n ?? 0) >= limit;
  };
  // The reservations of one turn share one command: each statement is a conditional write of its own counter.
  const bulk = unorderedBulkPerTurn(slots);
  /** Runs the statements unordered; the indexes that collided on a key, or throws any other failure. */
  const collisions = async (ops: AnyBulkWriteOperation<SlotDoc>[]): Promise<Set<number>> => {
    const outcomes = await bulk(ops);
    const other = outcomes.find((e) => e !== null && e.code !== DUPLICATE_KEY);
    if (other) throw other;
    return new Set(outcomes.flatMap((e, i) => (e === null ? [] : [i])));
  };
  let lastDrift = new Map<string, number>();

  return {
    async reserve(accountId, limits) {
      const counters = [
        { id: GLOBAL_SLOTS, limit: limits?.maxDepth ?? null, refusal: 'depth' as const },
        { id: accountId, limit: limits?.perAccount ?? null, refusal: 'account' as const },
      ];
      for (let attempt = 1; ; attempt++) {
        const failed = await collisions([...counters.map((c) => ensure(c.id)), ...counters.map((c) => take(c.id, c.limit))]);
        const refused = counters.filter((_, i) => failed.has(counters.length + i));
        if (refused.length === 0) return null;
        await giveBack(counters.filter((c) => !refused.includes(c)).map((c) => c.id));
        for (const c of refused) if (await isFull(c.id, c.limit)) return c.refusal;
        // Not full any more: what filled it was another refused attempt, since given back. Try again.
        if (attempt >= RESERVE_TRIES) return refused[0].refusal;
      }
    },

    async release(accountId) {
      await giveBack([GLOBAL_SLOTS, accountId]);
    },

    async heal() {
      // Counters of accounts with nothing queued go; one that is being taken right now is not at 0.
      await slots.deleteMany({ _id: { $ne: GLOBAL_SLOTS }, n: { $lte: 0 } });
      const [held, counters] = await Promise.all([
        jobs.aggregate<{ _id: string; n: number }>([{ $match: { slot: true } }, { $group: { _id: '$accountId', n: { $sum: 1 } } }]).toArray(),
        slots.find({}).toArray(),
      ]);
      const truth = new Map<string, number>([[GLOBAL_SLOTS, 0]]);
      for (const row of held) {
        truth.set(row._id, row.n);
        truth.set(GLOBAL_SLOTS, truth.get(GLOBAL_SLOTS)! + row.n);
      }
      const observed = new Map(counters.map((doc) => [doc._id, doc.n]));
      const drift = new Map<string, number>();
      for (const id of new Set([...observed.keys(), ...truth.keys()])) drift.set(id, (observed.get(id) ?? 0) - (truth.get(id) ?? 0));
      let healed = 0;
      for (const [id, now] of drift) {
        const before = lastDrift.get(id) ?? 0;
        // Only a difference seen twice in the same direction, by the part seen both times.
        const fix = Math.sign(now) === Math.sign(before) ? Math.sign(now) * Math.min(Math.abs(now), Math.abs(before)) : 0;
        if (fix === 0) continue;
        // Pinned to the value read: a counter that moved since (or another process healing it) is left for the next run.
        const res = observed.has(id)
          ? await slots.updateOne({ _id: id, n: observed.get(id)! }, { $inc: { n: -fix } })
          : await slots.updateOne({ _id: id }, { $setOnInsert: { n: -fix } }, { upsert: true });
        if (res.modifiedCount + res.upsertedCount === 0) continue;
        drift.set(id, now - fix);
        healed++;
      }
      lastDrift = drift;
      return healed;
    },
  };
}

/**
 * Inserts a job that holds queue slots: the reservation and the insert go
 * out side by side (one round trip of waiting). A refused reservation
 * deletes the job again; a failed insert gives the slots back.
 */
export async function insertHoldingSlots(
  slots: QueueSlots,
  accountId: string,
  limits: QueueLimits | null,
  insert: () => Promise<unknown>,
  remove: () => Promise<unknown>,
): Promise<QueueRefusal | null> {
  const [reserved, inserted] = await Promise.allSettled([slots.reserve(accountId, limits), insert()]);
  if (reserved.status === 'fulfilled' && reserved.value === null) {
    if (inserted.status === 'fulfilled') return null;
    await slots.release(accountId).catch(() => undefined);
    throw inserted.reason;
  }
  if (inserted.status === 'fulfilled') await remove();
  if (reserved.status === 'rejected') throw reserved.reason;
  return reserved.value;
}
