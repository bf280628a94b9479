import type { Collection } from 'mongodb';
import type { ChargeCommand, ChargeWriteResult, LedgerEntry } from '../../ports/documents.ts';
import { MongoServerError } from 'mongodb';
import type { JobsStore, KeyHolder } from '../../ports/jobs.ts';
import { insertHoldingSlots, type QueueSlots } from './mongo-queue-slots.ts';
import { fromDoc, toJobDoc, type JobDoc } from './mongo-job-docs.ts';
import { DUPLICATE_KEY, unorderedBulkPerTurn } from './mongo-bulk-per-turn.ts';

/**
 * `POST /tts` submissions on MongoDB, without multi-document transactions.
 * The job document is written FIRST, then the grant is charged; the charge
 * is the point of no return:
 *
 *   1. side by side: take the queue slots (conditional counters, see
 *      mongo-queue-slots.ts) and insert the job with `submission: 'pending'`
 *      and its intended charge (a content-cache hit takes no slot); both
 *      share their command with the other submissions of the same turn
 *      (mongo-bulk-per-turn.ts);
 *   2. the grant's conditional charge (mongo-billing.ts), whose ledger entry,
 *      queued in the grant document's outbox, names the job (`jobId`).
 *
 * A refused charge deletes the job and gives its slots back (`abandon`).
 * The ledger outbox relay moves the job to `submission: 'charged'` before
 * the entry leaves the grant (`confirmCharges`), so a charge that landed is
 * always visible: in a grant's outbox, or on its job. Crash repair
 * (`repair`) drops a submission still pending after a while whose entry is
 * in no outbox: its charge never landed. Should one land after all (a
 * process that stalled), its job no longer holds it and the relay refunds it.
 *
 * A submission with an `Idempotency-Key` writes the key on its job, under a
 * unique index: a second job under the key collides at step 1, before any
 * charge. A dropped submission's job leaves the index (deleted, or its key
 * unset by the repair), and a claim older than the key's retention is unset
 * before the insert, so the key is free again in both cases.
 */

export interface SubmissionBilling {
  /** the grant's conditional charge; the command's entry names the job */
  charge(cmd: ChargeCommand): Promise<ChargeWriteResult>;
  /** whether a charge entry still waits in the outbox of one of the account's grants */
  chargeQueued(accountId: string, chargeId: string): Promise<boolean>;
}

type SubmissionMethods = Pick<JobsStore, 'submission' | 'acceptedWithKey' | 'unpublished' | 'markPublished' | 'confirmCharges' | 'repair'>;


/** Stale submissions looked at per repair run. */
const REPAIR_BATCH = 200;

export function createMongoSubmissions(deps: { jobs: Collection<JobDoc>; slots: QueueSlots; billing: SubmissionBilling }): SubmissionMethods {
  const { jobs, slots, billing } = deps;
  // The submissions of one turn insert their jobs in one command.
  const bulk = unorderedBulkPerTurn(jobs);
  const insertJob = async (doc: JobDoc) => {
    const [failed] = await bulk([{ insertOne: { document: doc } }]);
    if (failed) throw failed;
  };
  return {
    submission(job, limits, key) {
      const queued = job.status === 'queued';
      let inserted = false;
      return {
        async write(cmd, charge) {
          if (!inserted) {
            const keyed = key ? { idempotencyKey: key.key, idempotencyFingerprint: key.fingerprint } : {};
            const doc = toJobDoc({ ...job, charge }, { submission: 'pending', publishPending: true, ...(queued ? { slot: true } : {}), ...keyed });
            // A claim the key's retention has outlived no longer holds it.
            if (key) await jobs.updateOne({ idempotencyKey: key.key, createdAt: { $lt: key.keptSince } }, { $unset: { idempotencyKey: '', idempotencyFingerprint: '' } });
            try {
              if (queued) {
                const full = await insertHoldingSlots(slots, job.accountId, limits, () => insertJob(doc), () => jobs.deleteOne({ _id: doc._id }));
                if (full) return { ok: false, queueFull: full };
              } else {
                await insertJob(doc);
              }
            } catch (err) {
              // The job's id is new, so a duplicate is the key: another job holds it, and nothing was charged.
              if (key && err instanceof MongoServerError && err.code === DUPLICATE_KEY) return { ok: false, keyTaken: true };
              throw err;
            }
            inserted = true;
          } else {
            // A later attempt, on another grant: the job names the charge before it can land.
            const held = await jobs.findOneAndUpdate({ _id: job.id, submission: 'pending' }, { $set: { charge } }, { projection: { _id: 1 } });
            if (!held) throw new Error(`submission of ${job.id} was dropped while it was being charged`);
          }
          return billing.charge({ ...cmd, entry: { ...cmd.entry, jobId: job.id } });
        },
        async abandon() {
          if (!inserted) return;
          // Safe even if the charge's outcome is unknown: a charge that landed for a job that is gone is refunded by the relay.
          const before = await jobs.findOneAndDelete({ _id: job.id, submission: 'pending' }, { projection: { slot: 1 } });
          if (before?.slot) await slots.release(job.accountId);
        },
      };
    },

    async acceptedWithKey(key, keptSince): Promise<KeyHolder | 'pending' | null> {
      const doc = await jobs.findOne({ idempotencyKey: key, createdAt: { $gte: keptSince } });
      const job = fromDoc(doc);
      if (!doc || !job || doc.submission === 'abandoned') return null;
      if (doc.submission === 'pending') return 'pending';
      return { job, fingerprint: doc.idempotencyFingerprint ?? '' };
    },

    async unpublished(before, limit) {
      const docs = await jobs
        .find({ publishPending: true, submission: 'charged', createdAt: { $lt: before } }, { projection: { _id: 1 } })
        .sort({ createdAt: 1 })
        .limit(limit)
        .toArray();
      return docs.map((doc) => doc._id);
    },

    async markPublished(jobIds) {
      if (jobIds.length > 0) await jobs.updateMany({ _id: { $in: jobIds } }, { $unset: { publishPending: '' } });
    },

    async confirmCharges(entries: LedgerEntry[]) {
      const paying = entries.filter((e): e is LedgerEntry & { jobId: string } => e.kind === 'charge' && typeof e.jobId === 'string');
      if (paying.length === 0) return [];
      // One statement for the batch, found by _id (the $or alone would be a collection scan).
      await jobs.updateMany(
        { _id: { $in: paying.map((e) => e.jobId) }, submission: 'pending', $or: paying.map((e) => ({ _id: e.jobId, 'charge.id': e.id })) },
        { $set: { submission: 'charged' } },
      );
      const held = await jobs
        .find({ _id: { $in: paying.map((e) => e.jobId) } }, { projection: { submission: 1, 'charge.id': 1 } })
        .toArray();
      const holder = new Map(held.map((doc) => [doc._id, doc]));
      return paying.filter((e) => {
        const doc = holder.get(e.jobId);
        return !(doc && doc.submission === 'charged' && doc.charge?.id === e.id);
      });
    },

    async repair(staleBefore, now) {
      let abandoned = 0;
      const stale = await jobs
        .find({ submission: 'pending', createdAt: { $lt: staleBefore } }, { projection: { accountId: 1, charge: 1 } })
        .limit(REPAIR_BATCH)
        .toArray();
      for (const doc of stale) {
        // Still in a grant's outbox: it landed, and the relay is about to confirm it.
        if (doc.charge && (await billing.chargeQueued(doc.accountId, doc.charge.id))) continue;
        const before = await jobs.findOneAndUpdate(
          { _id: doc._id, submission: 'pending' },
          {
            $set: {
              submission: 'abandoned', status: 'failed', charge: null, errorCode: 'synthesis_unavailable',
              error: 'The submission was interrupted before it was charged.', completedAt: now, leaseOwner: null, leaseUntil: null,
            },
            $unset: { slot: '', publishPending: '', idempotencyKey: '', idempotencyFingerprint: '' },
          },
          { returnDocument: 'before', projection: { slot: 1 } },
        );
        if (!before) continue;
        if (before.slot) await slots.release(doc.accountId);
        abandoned++;
      }
      return { abandoned, healed: await slots.heal() };
    },
  };
}
