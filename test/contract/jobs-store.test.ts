import test, { type ExecutionContext } from 'ava';
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { openMemoryDb } from '../../core/adapters/embedded-db.ts';
import { createSqliteJobs } from '../../core/adapters/documents/sqlite-jobs.ts';
import { createMongoDocuments } from '../../core/adapters/documents/mongo.ts';
import type { JobRecord, JobsStore } from '../../core/ports/jobs.ts';

/** The jobs store contract, run against every adapter. */
type Harness = { jobs: JobsStore; close(): Promise<void> };
type Open = () => Promise<Harness>;

const NOW = '2026-11-21T10:00:00.000Z';
const LEASE_S = 30;

/** NOW shifted by whole seconds, in the ISO form the workers pass */
function at(seconds: number): string {
  return new Date(Date.parse(NOW) + seconds * 1000).toISOString();
}

function newJob(overrides: Partial<JobRecord> = {}): JobRecord {
  const id = `job_${randomUUID()}`;
  return {
    id, accountId: 'acct_1', keyId: 'key_1', status: 'queued', source: 'tts', text: 'Xin chào Việt Nam',
    voiceId: 'vi_female_north', voiceName: 'Lan', engine: 'v4', emotion: 'neutral', speed: 1.25, aiRefine: true,
    textLength: 17, cacheKey: `ck_${id}`,
    charge: {
      id: `chg_${id}`, grantId: 'grant_1', accountId: 'acct_1', keyId: 'key_1', tokens: 66, engine: 'v4',
      route: 'POST /tts', requestId: `req_${id}`, dayKey: '2026-11-21', weekKey: '2026-W47', at: NOW,
    },
    audioKey: null, durationSeconds: null, processingMs: null, attempts: 0, leaseOwner: null, leaseUntil: null,
    errorCode: null, error: null, refunded: false, createdAt: NOW, startedAt: null, completedAt: null,
    ...overrides,
  };
}

const done = (processingMs: number, completedAt: string) => ({ audioKey: 'audio/x.mp3', durationSeconds: 2.5, processingMs, completedAt });
const failure = { errorCode: 'engine_error', error: 'the engine crashed', completedAt: at(5) };

function jobsContract(adapter: string, open: Open): void {
  const it = (rule: string, body: (jobs: JobsStore, t: ExecutionContext) => Promise<void>) =>
    test(`${adapter}: ${rule}`, async (t) => {
      const harness = await open();
      t.teardown(() => harness.close());
      await body(harness.jobs, t);
    });

  it('jobs are stored as given and read back one or many at a time', async (jobs, t) => {
    const a = newJob();
    const b = newJob({ keyId: null, voiceName: null, charge: null, aiRefine: false, source: 'audio_speech', status: 'completed',
      audioKey: 'audio/b.mp3', durationSeconds: 1.5, processingMs: 420, startedAt: NOW, completedAt: at(1) });
    t.deepEqual(await jobs.create(a), a);
    await jobs.create(b);
    t.deepEqual(await jobs.get(a.id), a);
    t.deepEqual(await jobs.get(b.id), b);
    t.is(await jobs.get('job_missing'), null);
    const many = await jobs.getMany([b.id, 'job_missing', a.id]);
    t.deepEqual([...many].sort((x, y) => x.id.localeCompare(y.id)), [a, b].sort((x, y) => x.id.localeCompare(y.id)));
    t.deepEqual(await jobs.getMany([]), []);
  });

  it('concurrent claims of a queued job: exactly one wins while its lease is live', async (jobs, t) => {
    const job = await jobs.create(newJob());
    const claims = await Promise.all(Array.from({ length: 8 }, (_, i) => jobs.claim(job.id, `w${i}`, at(LEASE_S), NOW)));
    const winners = claims.filter((c) => c !== null);
    t.is(winners.length, 1);
    const won = winners[0]!;
    t.like(won, { id: job.id, status: 'processing', attempts: 1, leaseUntil: at(LEASE_S), startedAt: NOW, text: job.text });
    t.deepEqual(await jobs.get(job.id), won);
    t.is(await jobs.claim(job.id, 'late', at(LEASE_S + 10), at(LEASE_S - 1)), null);
    t.is(await jobs.claim('job_missing', 'w', at(LEASE_S), NOW), null);
  });

  it('an expired lease is claimed again: attempts grow, startedAt stays the first', async (jobs, t) => {
    const job = await jobs.create(newJob());
    await jobs.claim(job.id, 'dead', at(LEASE_S), NOW);
    const again = await jobs.claim(job.id, 'alive', at(LEASE_S + 1 + LEASE_S), at(LEASE_S + 1));
    t.like(again, { status: 'processing', leaseOwner: 'alive', attempts: 2, startedAt: NOW });
    t.false(await jobs.renewLease(job.id, 'dead', at(100)));
    t.is(await jobs.claim(job.id, 'third', at(100), at(LEASE_S + 2)), null);
  });

  it('only the lease owner renews, and only while the job is processing', async (jobs, t) => {
    const job = await jobs.create(newJob());
    t.false(await jobs.renewLease(job.id, 'w1', at(60)));
    await jobs.claim(job.id, 'w1', at(LEASE_S), NOW);
    t.true(await jobs.renewLease(job.id, 'w1', at(90)));
    t.true(await jobs.renewLease(job.id, 'w1', at(90)));
    t.false(await jobs.renewLease(job.id, 'w2', at(120)));
    t.is((await jobs.get(job.id))?.leaseUntil, at(90));
    // the renewed lease holds past the first one
    t.is(await jobs.claim(job.id, 'w2', at(200), at(LEASE_S + 1)), null);
    await jobs.complete(job.id, done(900, at(40)));
    t.false(await jobs.renewLease(job.id, 'w1', at(150)));
  });

  it('release by the owner puts the job back in the queue', async (jobs, t) => {
    const job = await jobs.create(newJob());
    await jobs.claim(job.id, 'w1', at(LEASE_S), NOW);
    await jobs.release(job.id, 'w2', 'not mine');
    t.like(await jobs.get(job.id), { status: 'processing', leaseOwner: 'w1', error: null });
    await jobs.release(job.id, 'w1', 'engine timed out');
    t.like(await jobs.get(job.id), { status: 'queued', leaseOwner: null, leaseUntil: null, error: 'engine timed out', attempts: 1 });
    t.is(await jobs.queuePosition(job.id), 1);
    t.like(await jobs.claim(job.id, 'w2', at(LEASE_S + 5), at(5)), { leaseOwner: 'w2', attempts: 2, startedAt: NOW });
  });

  it('a job completes once; a later complete or fail changes nothing', async (jobs, t) => {
    const job = await jobs.create(newJob());
    await jobs.claim(job.id, 'w1', at(LEASE_S), NOW);
    await jobs.release(job.id, 'w1', 'first try failed');
    await jobs.claim(job.id, 'w1', at(LEASE_S), NOW);
    t.true(await jobs.complete(job.id, done(1200, at(3))));
    const completed = await jobs.get(job.id);
    t.like(completed, {
      status: 'completed', audioKey: 'audio/x.mp3', durationSeconds: 2.5, processingMs: 1200, completedAt: at(3),
      leaseOwner: null, leaseUntil: null, error: null, errorCode: null,
    });
    t.false(await jobs.complete(job.id, done(5000, at(9))));
    t.false(await jobs.fail(job.id, failure));
    t.deepEqual(await jobs.get(job.id), completed);
    t.is(await jobs.claim(job.id, 'w2', at(100), at(99)), null);
    // a queued job may end without a worker (a cache hit)
    t.true(await jobs.complete((await jobs.create(newJob())).id, done(0, NOW)));
    t.false(await jobs.complete('job_missing', done(1, NOW)));
  });

  it('a job fails once; a later fail or complete changes nothing', async (jobs, t) => {
    const job = await jobs.create(newJob());
    await jobs.claim(job.id, 'w1', at(LEASE_S), NOW);
    t.true(await jobs.fail(job.id, failure));
    const failed = await jobs.get(job.id);
    t.like(failed, { status: 'failed', errorCode: 'engine_error', error: 'the engine crashed', completedAt: at(5), leaseOwner: null, leaseUntil: null });
    t.false(await jobs.fail(job.id, { ...failure, errorCode: 'other' }));
    t.false(await jobs.complete(job.id, done(10, at(6))));
    t.deepEqual(await jobs.get(job.id), failed);
    t.true(await jobs.fail((await jobs.create(newJob())).id, failure));
  });

  it('a refund is recorded on the job', async (jobs, t) => {
    const job = await jobs.create(newJob());
    await jobs.fail(job.id, failure);
    t.false((await jobs.get(job.id))?.refunded);
    await jobs.markRefunded(job.id);
    await jobs.markRefunded(job.id);
    t.true((await jobs.get(job.id))?.refunded);
  });

  it('saved copies whose keep-alive lapsed (a crash) are failed; a copy streaming for hours that renews it, and async jobs, are not touched', async (jobs, t) => {
    const copy = (startedAt: string, leaseUntil: string | null) =>
      jobs.create(newJob({ source: 'audio_speech', status: 'processing', startedAt, leaseOwner: leaseUntil ? 'saved-copy' : null, leaseUntil }));
    const now = '2026-01-01T03:00:00.000Z';
    const lapsed = await copy('2026-01-01T02:50:00.000Z', '2026-01-01T02:59:00.000Z');
    const longLive = await copy('2026-01-01T00:00:00.000Z', '2026-01-01T03:01:00.000Z');
    const renewed = await copy('2026-01-01T00:00:00.000Z', '2026-01-01T02:59:00.000Z');
    t.true(await jobs.renewLease(renewed.id, 'saved-copy', '2026-01-01T03:04:00.000Z'));
    // Recorded by an older version, without a keep-alive: judged by its start, an hour.
    const legacyOld = await copy('2026-01-01T01:30:00.000Z', null);
    const legacyLive = await copy('2026-01-01T02:30:00.000Z', null);
    const asyncJob = await jobs.create(newJob({ status: 'processing', startedAt: '2026-01-01T00:00:00.000Z', leaseOwner: 'w1', leaseUntil: '2026-01-01T02:00:00.000Z' }));
    t.is(await jobs.failStaleCopies(now, '2026-01-01T02:00:00.000Z'), 2);
    t.like(await jobs.get(lapsed.id), { status: 'failed', errorCode: 'synthesis_failed', completedAt: now });
    t.is((await jobs.get(legacyOld.id))?.status, 'failed');
    for (const live of [longLive, renewed, legacyLive, asyncJob]) t.is((await jobs.get(live.id))?.status, 'processing');
  });

  it('active jobs are counted for the queue and per account', async (jobs, t) => {
    t.is(await jobs.countActive(), 0);
    const [a1, a2, a3] = [newJob(), newJob(), newJob()];
    for (const j of [a1, a2, a3]) await jobs.create(j);
    await jobs.create(newJob({ accountId: 'acct_2' }));
    await jobs.create(newJob({ status: 'completed', source: 'audio_speech', completedAt: NOW }));
    // a synchronous response being saved is not queued work
    await jobs.create(newJob({ status: 'processing', source: 'audio_speech', startedAt: NOW }));
    await jobs.claim(a1.id, 'w1', at(LEASE_S), NOW);
    t.is(await jobs.countActive(), 4);
    t.is(await jobs.countActiveByAccount('acct_1'), 3);
    await jobs.complete(a2.id, done(100, at(1)));
    await jobs.fail(a3.id, failure);
    t.is(await jobs.countActive(), 2);
    t.is(await jobs.countActiveByAccount('acct_1'), 1);
    t.is(await jobs.countActiveByAccount('acct_2'), 1);
    t.is(await jobs.countActiveByAccount('acct_none'), 0);
  });

  it('queue position follows submission order, not clocks, and is null once a job leaves the queue', async (jobs, t) => {
    // identical createdAt: the order must come from the store, not the timestamp
    const [j1, j2, j3] = [newJob(), newJob({ accountId: 'acct_2' }), newJob()];
    for (const j of [j1, j2, j3]) await jobs.create(j);
    t.deepEqual(await Promise.all([j1, j2, j3].map((j) => jobs.queuePosition(j.id))), [1, 2, 3]);
    await jobs.claim(j1.id, 'w1', at(LEASE_S), NOW);
    t.deepEqual(await Promise.all([j1, j2, j3].map((j) => jobs.queuePosition(j.id))), [null, 1, 2]);
    // a released job goes back to its original place, ahead of later submissions
    await jobs.release(j1.id, 'w1', 'retry');
    t.deepEqual(await Promise.all([j1, j2, j3].map((j) => jobs.queuePosition(j.id))), [1, 2, 3]);
    await jobs.complete(j2.id, done(100, at(1)));
    await jobs.fail(j1.id, failure);
    t.deepEqual(await Promise.all([j1, j2, j3].map((j) => jobs.queuePosition(j.id))), [null, null, 1]);
    t.is(await jobs.queuePosition('job_missing'), null);
  });

  it('recent render time averages the last 50 completed async jobs', async (jobs, t) => {
    t.is(await jobs.recentRenderMs(), null);
    const [a, b] = [newJob(), newJob()];
    for (const j of [a, b]) await jobs.create(j);
    await jobs.complete(a.id, done(100, at(1)));
    await jobs.complete(b.id, done(101, at(2)));
    t.is(await jobs.recentRenderMs(), 101);
    // saved synchronous responses, failures and queued jobs do not count
    await jobs.create(newJob({ source: 'audio_speech', status: 'completed', processingMs: 99_999, completedAt: at(500) }));
    await jobs.fail((await jobs.create(newJob())).id, failure);
    await jobs.create(newJob());
    t.is(await jobs.recentRenderMs(), 101);
    for (let i = 0; i < 50; i++) {
      await jobs.create(newJob({ status: 'completed', processingMs: 2000 + (i % 2) * 10, completedAt: at(10 + i) }));
    }
    t.is(await jobs.recentRenderMs(), 2005);
  });

  it('rendered audio is cached by request hash', async (jobs, t) => {
    t.is(await jobs.findCached('ck_1'), null);
    await jobs.putCached('ck_1', { audioKey: 'audio/1.mp3', durationSeconds: 3.25 });
    t.deepEqual(await jobs.findCached('ck_1'), { audioKey: 'audio/1.mp3', durationSeconds: 3.25 });
    await jobs.putCached('ck_1', { audioKey: 'audio/1b.mp3', durationSeconds: 3.5 });
    t.deepEqual(await jobs.findCached('ck_1'), { audioKey: 'audio/1b.mp3', durationSeconds: 3.5 });
    t.is(await jobs.findCached('ck_2'), null);
  });

  it('cache look-ups made together each get their own answer, the same key asked twice included', async (jobs, t) => {
    await jobs.putCached('ck_a', { audioKey: 'audio/a.mp3', durationSeconds: 1 });
    await jobs.putCached('ck_b', { audioKey: 'audio/b.mp3', durationSeconds: 2 });
    const keys = ['ck_a', 'ck_missing', 'ck_b', 'ck_a', ...Array.from({ length: 300 }, (_, i) => (i % 3 === 0 ? 'ck_b' : `ck_none_${i}`))];
    const found = await Promise.all(keys.map((key) => jobs.findCached(key)));
    t.deepEqual(found.map((hit) => hit?.audioKey ?? null), keys.map((key) => ({ ck_a: 'audio/a.mp3', ck_b: 'audio/b.mp3' } as Record<string, string>)[key] ?? null));
  });
}

jobsContract('sqlite (memory)', async () => {
  const db = openMemoryDb();
  return { jobs: createSqliteJobs(db), close: async () => void db.close() };
});

const mongoUrl = process.env.MONGODB_URL;
if (mongoUrl) {
  // ava wants tests declared synchronously; the driver connects on the first operation.
  const client = new MongoClient(mongoUrl);
  test.after.always(() => client.close());
  jobsContract('mongo', async () => {
    const name = `contract_jobs_${randomUUID().slice(0, 8)}`;
    const { jobs } = await createMongoDocuments(client, name);
    return { jobs, close: async () => void (await client.db(name).dropDatabase()) };
  });
} else {
  console.log('jobs store contract: MongoDB adapter skipped, MONGODB_URL is not set');
}
