import type { Collection, Db, Document, Filter } from 'mongodb';
import type { CachedAudio, JobRecord, JobsStore } from '../../ports/jobs.ts';

/**
 * Jobs on MongoDB with the semantics of sqlite-jobs.ts. Every state change is
 * a conditional single-document write with classic update operators (no
 * update pipelines), so two workers racing for a job, or a late completion
 * racing a failure, are decided by the server, not by a read.
 */

type JobDoc = Omit<JobRecord, 'id'> & { _id: string; seq?: number };
type CacheDoc = CachedAudio & { _id: string };
type CounterDoc = { _id: string; seq: number };

const ACTIVE = ['queued', 'processing'] as const;
const RECENT_RENDERS = 50;

function toDoc(job: JobRecord, seq: number | undefined): JobDoc {
  const { id, ...rest } = job;
  return seq === undefined ? { ...rest, _id: id } : { ...rest, _id: id, seq };
}

function fromDoc(doc: JobDoc | null): JobRecord | null {
  if (!doc) return null;
  const { _id, seq: _seq, ...rest } = doc;
  return { ...rest, id: _id };
}

export async function createMongoJobs(db: Db): Promise<JobsStore> {
  const jobs = db.collection<JobDoc>('tts_jobs');
  const cache = db.collection<CacheDoc>('tts_audio_cache');
  const counters = db.collection<CounterDoc>('counters');
  await createJobIndexes(jobs);

  // A counter, not ObjectId order: ObjectIds minted by several API processes within one second sort by process, not by submission.
  const nextSeq = async (): Promise<number> => {
    const doc = await counters.findOneAndUpdate(
      { _id: 'tts_jobs' },
      { $inc: { seq: 1 } },
      { upsert: true, returnDocument: 'after' },
    );
    if (!doc) throw new Error('tts_jobs counter upsert returned no document');
    return doc.seq;
  };

  return {
    async create(job) {
      // Only a job that can wait in the queue needs a place in it; saved /audio/speech copies skip the counter write.
      const queueable = (ACTIVE as readonly string[]).includes(job.status);
      await jobs.insertOne(toDoc(job, queueable ? await nextSeq() : undefined));
      return job;
    },
    async get(id) {
      return fromDoc(await jobs.findOne({ _id: id }));
    },
    async getMany(ids) {
      if (ids.length === 0) return [];
      const docs = await jobs.find({ _id: { $in: ids } }).toArray();
      return docs.map((doc) => fromDoc(doc) as JobRecord);
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
      const res = await jobs.updateOne(
        { _id: id, status: { $in: [...ACTIVE] } },
        {
          $set: {
            status: 'completed', audioKey: r.audioKey, durationSeconds: r.durationSeconds, processingMs: r.processingMs,
            completedAt: r.completedAt, leaseOwner: null, leaseUntil: null, error: null,
          },
        },
      );
      return res.modifiedCount === 1;
    },
    async fail(id, r) {
      const res = await jobs.updateOne(
        { _id: id, status: { $in: [...ACTIVE] } },
        {
          $set: {
            status: 'failed', errorCode: r.errorCode, error: r.error, completedAt: r.completedAt,
            leaseOwner: null, leaseUntil: null,
          },
        },
      );
      return res.modifiedCount === 1;
    },
    async markRefunded(id) {
      await jobs.updateOne({ _id: id }, { $set: { refunded: true } });
    },
    async failStaleCopies(startedBefore, completedAt) {
      const result = await jobs.updateMany(
        { source: 'audio_speech', status: 'processing', startedAt: { $lt: startedBefore } },
        { $set: { status: 'failed', errorCode: 'synthesis_failed', error: 'The response was interrupted before its copy was saved.', completedAt } },
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
      const doc = await cache.findOne({ _id: cacheKey });
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
  ]);
}
