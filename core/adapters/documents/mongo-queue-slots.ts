import { MongoBulkWriteError, type AnyBulkWriteOperation, type Collection, type Document } from 'mongodb';
import type { QueueLimits } from '../../ports/jobs.ts';

/**
 * Queue depth counters on MongoDB: one document for the whole queue and one
 * per account, taken with the job's insert and given back when the job ends.
 *
 * They live in the jobs collection itself (`_id` `slots:*` and
 * `slots:<accountId>`, no `status` field, so no job query or index sees
 * them) because one command addresses one collection: the two conditional
 * increments and the job's insert (an upsert on its fresh id) go to the
 * server as ONE `update` command. A conditional increment of a full counter
 * falls through to its upsert, which collides on `_id`: that duplicate-key
 * error is the refusal. The statements run unordered (every one is tried,
 * on MongoDB and on the wire-compatible test server alike) and whatever a
 * refused attempt took is given back, the job deleted.
 *
 * A job holds its slots while it carries `slot: true`; whoever removes that
 * flag (the job ending, or a dropped submission) gives the slots back, so
 * they are given back at most once. A process that dies between those two
 * writes leaves a counter too high; `heal` compares the counters with the
 * jobs that hold slots and corrects a difference seen in two consecutive
 * runs (one run could catch a submission between its statements).
 */

export const GLOBAL_SLOTS = 'slots:*';
export const accountSlots = (accountId: string) => `slots:${accountId}`;
/** Every counter's `_id` sorts in [GLOBAL_SLOTS, SLOTS_END) (`*` sorts before any account id, `;` right after `:`): a range on the _id index. */
const SLOTS_END = 'slots;';

interface SlotDoc {
  _id: string;
  n: number;
}

const DUPLICATE_KEY = 11000;
/** Attempts of a reservation refused by a counter that was no longer full when read again. */
const RESERVE_TRIES = 4;

export interface QueueSlots {
  /**
   * Takes a slot of the queue and of the account (within `limits`, or
   * unconditionally when null) and inserts `job` in the same command.
   * Returns which limit refused it, or null when the job was inserted.
   */
  reserveAndInsert(accountId: string, limits: QueueLimits | null, job: Document): Promise<'depth' | 'account' | null>;
  release(accountId: string): Promise<void>;
  /** corrects counters that drifted from the jobs holding slots; returns how many counters it changed */
  heal(): Promise<number>;
}

export function createQueueSlots(collection: Collection<Document>): QueueSlots {
  const slots = collection as unknown as Collection<SlotDoc>;
  const take = (id: string, limit: number | null): AnyBulkWriteOperation<Document> => ({
    updateOne: { filter: (limit === null ? { _id: id } : { _id: id, n: { $lt: limit } }) as Document, update: { $inc: { n: 1 } }, upsert: true },
  });
  // Creates a missing counter at 0 before it is taken, so that a collision of `take` means full, not "created meanwhile".
  const ensure = (id: string): AnyBulkWriteOperation<Document> => ({
    updateOne: { filter: { _id: id } as Document, update: { $setOnInsert: { n: 0 } }, upsert: true },
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
  let lastDrift = new Map<string, number>();

  /** Runs the statements unordered; the indexes that collided on a key, or throws any other failure. */
  const collisions = async (ops: AnyBulkWriteOperation<Document>[]): Promise<Set<number>> => {
    try {
      await collection.bulkWrite(ops, { ordered: false });
      return new Set();
    } catch (err) {
      const errors = err instanceof MongoBulkWriteError ? [err.writeErrors].flat() : [];
      if (errors.length === 0 || errors.some((e) => e.code !== DUPLICATE_KEY)) throw err;
      return new Set(errors.map((e) => e.index));
    }
  };

  return {
    async reserveAndInsert(accountId, limits, job) {
      const own = accountSlots(accountId);
      const { _id, ...fields } = job;
      const counters = [
        { id: GLOBAL_SLOTS, limit: limits?.maxDepth ?? null, refusal: 'depth' as const },
        { id: own, limit: limits?.perAccount ?? null, refusal: 'account' as const },
      ];
      // Statement indexes: the counters' `ensure`, their `take`, then the job.
      const takeAt = (i: number) => counters.length + i;
      const jobAt = 2 * counters.length;
      for (let attempt = 1; ; attempt++) {
        const failed = await collisions([
          ...counters.map((c) => ensure(c.id)),
          ...counters.map((c) => take(c.id, c.limit)),
          { updateOne: { filter: { _id }, update: { $setOnInsert: fields }, upsert: true } },
        ]);
        const refused = counters.filter((_, i) => failed.has(takeAt(i)));
        if (refused.length === 0 && !failed.has(jobAt)) return null;
        // Undo this attempt: the counters it did take, and the job if it went in.
        await giveBack(counters.filter((_, i) => !failed.has(takeAt(i))).map((c) => c.id));
        if (failed.has(jobAt)) throw new Error(`job ${String(_id)} already exists`);
        await collection.deleteOne({ _id });
        for (const c of refused) if (await isFull(c.id, c.limit)) return c.refusal;
        // Not full any more: what filled it was another refused attempt, since given back. Try again.
        if (attempt >= RESERVE_TRIES) return refused[0].refusal;
      }
    },

    async release(accountId) {
      await giveBack([GLOBAL_SLOTS, accountSlots(accountId)]);
    },

    async heal() {
      // Counters of accounts with nothing queued go; one that is being taken right now is not at 0.
      await slots.deleteMany({ _id: { $gt: GLOBAL_SLOTS, $lt: SLOTS_END }, n: { $lte: 0 } });
      const [held, counters] = await Promise.all([
        collection.aggregate<{ _id: string; n: number }>([
          { $match: { slot: true } },
          { $group: { _id: '$accountId', n: { $sum: 1 } } },
        ]).toArray(),
        slots.find({ _id: { $gte: GLOBAL_SLOTS, $lt: SLOTS_END } }).toArray(),
      ]);
      const truth = new Map<string, number>([[GLOBAL_SLOTS, 0]]);
      for (const row of held) {
        truth.set(accountSlots(row._id), row.n);
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
