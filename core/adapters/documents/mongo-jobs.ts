import type { Collection, Db, Document, Filter } from 'mongodb';
import type { CachedAudio, JobRecord, JobsStore } from '../../ports/jobs.ts';
import { ACTIVE, fromDoc, isQueueable, toJobDoc, type JobDoc } from './mongo-job-docs.ts';
import { createQueueSlots, insertHoldingSlots } from './mongo-queue-slots.ts';
import { createMongoSubmissions, type SubmissionBilling } from './mongo-submissions.ts';
import { readsPerTurn } from '../../per-turn.ts';

/**
 * Jobs on MongoDB with the semantics of sqlite-jobs.ts. Every state change is
 * a conditional single-document write with classic update operators (no
 * update pipelines), so two workers racing for a job, or a late completion
 * racing a failure, are decided by the server, not by a read.
 */

type CacheDoc = CachedAudio & { _id: string };

const RECENT_RENDERS = 50;

/** `billing` applies a submission's charge (mongo-billing.ts); jobs and grants share the database. */
export async function createMongoJobs(db: Db, billing: SubmissionBilling): Promise<JobsStore> {
  const jobs = db.collection<JobDoc>('tts_jobs');
  const cache = db.collection<CacheDoc>('tts_audio_cache');
  const slots = createQueueSlots(db, 'tts_jobs');
  // Every POST /tts looks its content-cache key up: those of one turn go out as one query.
  const cachedOf = readsPerTurn<string, CacheDoc>(async (keys) =>
    new Map((await cache.find({ _id: { $in: keys } }).toArray()).map((doc): [string, CacheDoc] => [doc._id, doc])));
  await createJobIndexes(jobs);

  /** Ends an active job once; the one write that ends it gives its queue slots back. */
  async function finish(id: string, set: Partial<JobDoc>): Promise<boolean> {
    const before = await jobs.findOneAndUpdate(
      { _id: id, status: { $in: [...ACTIVE] } },
      { $set: { ...set, leaseOwner: null, leaseUntil: null }, $unset: { slot: '' } },
      { returnDocument: 'before', projection: { slot: 1, accountId: 1 } },
    );
    if (!before) return false;
    if (before.slot) await slots.release(before.accountId);
    return true;
  }

  return {
    ...createMongoSubmissions({ jobs, slots, billing }),
    async create(job) {
      // An async job waiting in the queue holds its slots, like one accepted by a submission (no limits here).
      if (isQueueable(job) && job.source === 'tts') {
        const doc = toJobDoc(job, { slot: true });
        await insertHoldingSlots(slots, job.accountId, null, () => jobs.insertOne(doc), () => jobs.deleteOne({ _id: doc._id }));
      } else {
        await jobs.insertOne(toJobDoc(job));
      }
      return job;
    },
    async get(id) {
      return fromDoc(await jobs.findOne({ _id: id }));
    },
    async getMany(ids) {
      if (ids.length === 0) return [];
      const docs = await jobs.find({ _id: { $in: ids } }).toArray();
      return docs.map(fromDoc).filter((job): job is JobRecord => job !== null);
    },
    async claim(id, owner, leaseUntil, now) {
      const claimable: Filter<JobDoc> = { _id: id, $or: [{ status: 'queued' }, { status: 'processing', leaseUntil: { $lt: now } }] };
      const lease = { status: 'processing' as const, leaseOwner: owner, leaseUntil };
      // startedAt keeps the first attempt's time: one conditional write for a job never started, one for a retried job.
      const first = await jobs.findOneAndUpdate(
        { ...claimable, startedAt: null },
        { $set: { ...lease, startedAt: now }, $inc: { attempts: 1 } },
        { returnDocument: 'after' },
      );
      if (first) return fromDoc(first);
      return fromDoc(await jobs.findOneAndUpdate(
        { ...claimable, startedAt: { $ne: null } },
        { $set: lease, $inc: { attempts: 1 } },
        { returnDocument: 'after' },
      ));
    },
    async renewLease(id, owner, leaseUntil) {
      const res = await jobs.updateOne({ _id: id, leaseOwner: owner, status: 'processing' }, { $set: { leaseUntil } });
      // matched, not modified: renewing to the same instant still proves ownership
      return res.matchedCount === 1;
    },
    async release(id, owner, error) {
      await jobs.updateOne(
        { _id: id, leaseOwner: owner, status: 'processing' },
        { $set: { status: 'queued', leaseOwner: null, leaseUntil: null, error } },
      );
    },
    async complete(id, r) {
      return finish(id, {
        status: 'completed', audioKey: r.audioKey, durationSeconds: r.durationSeconds, processingMs: r.processingMs,
        completedAt: r.completedAt, error: null,
      });
    },
    async fail(id, r) {
      return finish(id, { status: 'failed', errorCode: r.errorCode, error: r.error, completedAt: r.completedAt });
    },
    async markRefunded(id) {
      await jobs.updateOne({ _id: id }, { $set: { refunded: true } });
    },
    async failStaleCopies(now, startedBefore) {
      const result = await jobs.updateMany(
        { source: 'audio_speech', status: 'processing', $or: [{ leaseUntil: { $lt: now } }, { leaseUntil: null, startedAt: { $lt: startedBefore } }] },
        { $set: { status: 'failed', errorCode: 'synthesis_failed', error: 'The response was interrupted before its copy was saved.', completedAt: now, leaseOwner: null, leaseUntil: null } },
      );
      return result.modifiedCount;
    },
    // Saved copies of POST /audio/speech are 'processing' while their response streams; they are not queued work.
    async countActive() {
      return jobs.countDocuments({ status: { $in: [...ACTIVE] }, source: 'tts' });
    },
    async countActiveByAccount(accountId) {
      return jobs.countDocuments({ accountId, status: { $in: [...ACTIVE] }, source: 'tts' });
    },
    async queuePosition(id) {
      const job = await jobs.findOne({ _id: id, status: 'queued' }, { projection: { seq: 1 } });
      if (!job || job.seq === undefined) return null;
      return jobs.countDocuments({ status: 'queued', seq: { $lte: job.seq } });
    },
    async recentRenderMs() {
      const [row] = await jobs
        .aggregate<{ ms: number | null }>([
          { $match: { status: 'completed', source: 'tts', processingMs: { $ne: null } } },
          { $sort: { completedAt: -1 } },
          { $limit: RECENT_RENDERS },
          { $group: { _id: null, ms: { $avg: '$processingMs' } } },
        ])
        .toArray();
      return row?.ms == null ? null : Math.round(row.ms);
    },
    async findCached(cacheKey) {
      const doc = await cachedOf(cacheKey);
      return doc ? { audioKey: doc.audioKey, durationSeconds: doc.durationSeconds } : null;
    },
    async putCached(cacheKey, audio) {
      await cache.replaceOne(
        { _id: cacheKey },
        { audioKey: audio.audioKey, durationSeconds: audio.durationSeconds },
        { upsert: true },
      );
    },
  };
}

async function createJobIndexes(jobs: Collection<JobDoc>): Promise<void> {
  // Partial on the active statuses ($in in a partial filter needs MongoDB 6.0+): finished jobs pile up, the queue stays small.
  const active: Document = { status: { $in: [...ACTIVE] } };
  await jobs.createIndexes([
    { key: { status: 1, seq: 1 }, name: 'active_queue', partialFilterExpression: active },
    { key: { accountId: 1, status: 1 }, name: 'active_by_account', partialFilterExpression: active },
    { key: { source: 1, completedAt: -1 }, name: 'recent_completed', partialFilterExpression: { status: 'completed' } },
    { key: { accountId: 1 }, name: 'holding_slots', partialFilterExpression: { slot: true } },
    { key: { submission: 1, createdAt: 1 }, name: 'submissions_pending', partialFilterExpression: { submission: 'pending' } },
    { key: { publishPending: 1, createdAt: 1 }, name: 'publications_pending', partialFilterExpression: { publishPending: true } },
    // One job per Idempotency-Key: a second insert under a key collides. Sparse: jobs without one are not in it.
    { key: { idempotencyKey: 1 }, name: 'idempotency_key', unique: true, sparse: true },
  ]);
}
