import test, { type ExecutionContext } from 'ava';
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { openMemoryDb } from '../../core/adapters/embedded-db.ts';
import { createSqliteDocuments } from '../../core/adapters/documents/sqlite.ts';
import { createMongoDocuments } from '../../core/adapters/documents/mongo.ts';
import type { ChargeCommand, Documents, Grant, LedgerEntry } from '../../core/ports/documents.ts';
import type { Charge } from '../../core/ports/charge.ts';
import type { JobRecord, QueueLimits, SubmissionKey } from '../../core/ports/jobs.ts';

/**
 * The `POST /tts` submission contract (core/ports/jobs.ts `JobSubmission`),
 * run against every documents adapter: one write in effect for the queue
 * limits, the charge, the job and its publication; slots given back once;
 * crash repair; the ledger relay's hand-over of charges to their jobs.
 */
type Harness = { docs: Documents; close(): Promise<void> };
type Open = () => Promise<Harness>;

const PRICE = 195;
const DAY = '2026-11-21';
const WEEK = '2026-W47';
const NOW = '2026-11-21T10:00:00.000Z';
const FUTURE = '2999-01-01T00:00:00.000Z';
const ROOMY: QueueLimits = { maxDepth: 1000, perAccount: 1000 };

function newGrant(accountId: string, overrides: Partial<Grant> = {}): Grant {
  return {
    id: `grant_${randomUUID()}`, accountId, plan: 'pro', totalTokens: 100_000, usedTokens: 0, dailyCap: null, weeklyCap: null,
    dayKey: null, dayUsed: 0, weekKey: null, weekUsed: 0, expiresAt: null, isGift: false, engines: ['v4'], status: 'active',
    createdAt: '2026-11-01T00:00:00.000Z', ...overrides,
  };
}

function newJob(accountId: string, overrides: Partial<JobRecord> = {}): JobRecord {
  return {
    id: `job_${randomUUID()}`, accountId, keyId: 'key_1', status: 'queued', source: 'tts', text: 'Xin chào Việt Nam',
    voiceId: 'vi-north-female-mai', voiceName: 'Mai', engine: 'v4', emotion: 'natural', speed: 1, aiRefine: false, textLength: 17,
    cacheKey: `ck_${randomUUID()}`, charge: null, audioKey: null, durationSeconds: null, processingMs: null, attempts: 0,
    leaseOwner: null, leaseUntil: null, errorCode: null, error: null, refunded: false, createdAt: NOW, startedAt: null, completedAt: null,
    ...overrides,
  };
}

/** What the billing service hands a submission's `write` for one attempt on `grant`. */
function attemptOn(grant: Grant, tokens = PRICE): { cmd: ChargeCommand; charge: Charge } {
  const id = `chg_${randomUUID()}`;
  const entry: LedgerEntry = {
    id, kind: 'charge', grantId: grant.id, accountId: grant.accountId, keyId: 'key_1', chargeId: id, requestId: `req_${id}`,
    route: 'tts', tokens, dayKey: DAY, weekKey: WEEK, at: NOW,
  };
  const charge: Charge = { id, grantId: grant.id, accountId: grant.accountId, keyId: 'key_1', tokens, engine: 'v4', route: 'tts', requestId: entry.requestId, dayKey: DAY, weekKey: WEEK, at: NOW };
  return { cmd: { grantId: grant.id, tokens, dayKey: DAY, weekKey: WEEK, now: NOW, entry }, charge };
}

/** Submits like the billing service does: a charge that lost a race with a concurrent one is attempted again. */
async function submit(docs: Documents, grant: Grant, limits: QueueLimits, overrides: Partial<JobRecord> = {}, key?: SubmissionKey) {
  const job = newJob(grant.accountId, overrides);
  const submission = docs.jobs.submission(job, limits, key);
  for (let attempt = 1; ; attempt++) {
    const { cmd, charge } = attemptOn(grant);
    const result = await submission.write(cmd, charge);
    if (result.ok || 'queueFull' in result || 'keyTaken' in result || attempt === 5) {
      // As the billing service does after a refusal: the submission is abandoned.
      if (!result.ok) await submission.abandon();
      return { job, charge, result };
    }
  }
}

const KEPT_SINCE = '2026-11-20T10:00:00.000Z';
function idempotencyKey(fingerprint = 'fp-1', keptSince = KEPT_SINCE): SubmissionKey {
  return { key: `key_1:idem-${randomUUID()}`, fingerprint, keptSince };
}

/** The job holding `key` once every accepted charge has been handed to its job (a store may say pending until then). */
async function holderOf(docs: Documents, key: SubmissionKey) {
  await relayHandOver(docs);
  return docs.jobs.acceptedWithKey(key.key, key.keptSince);
}

/** What the ledger outbox relay does before publishing: hand charges to their jobs. */
async function relayHandOver(docs: Documents): Promise<LedgerEntry[]> {
  return docs.jobs.confirmCharges(await docs.outbox.pending(10_000));
}

function submissionContract(adapter: string, open: Open): void {
  const it = (rule: string, body: (docs: Documents, t: ExecutionContext) => Promise<void>) =>
    test(`${adapter}: ${rule}`, async (t) => {
      const harness = await open();
      t.teardown(() => harness.close());
      await body(harness.docs, t);
    });

  it('a submission charges the grant, stores the job holding that charge and leaves its publication pending until marked', async (docs, t) => {
    const grant = await docs.grants.create(newGrant(`acct_${randomUUID()}`));
    const { job, charge, result } = await submit(docs, grant, ROOMY);
    t.true(result.ok);
    t.like(await docs.jobs.get(job.id), { status: 'queued', charge });
    t.is((await docs.grants.get(grant.id))!.usedTokens, PRICE);
    const entries = (await docs.outbox.pending(100)).filter((e) => e.grantId === grant.id);
    t.deepEqual(entries.map((e) => [e.id, e.kind, e.tokens]), [[charge.id, 'charge', PRICE]]);
    t.deepEqual(await relayHandOver(docs), [], 'the job holds its charge');
    t.deepEqual(await docs.jobs.unpublished(NOW, 10), [], 'not yet due: its own process publishes it');
    t.deepEqual(await docs.jobs.unpublished(FUTURE, 10), [job.id]);
    await docs.jobs.markPublished([job.id]);
    t.deepEqual(await docs.jobs.unpublished(FUTURE, 10), []);
    t.is(await docs.jobs.countActiveByAccount(grant.accountId), 1);
  });

  it('the per-account queue limit holds under concurrency: exactly the limit is accepted, nothing charged for a refusal', async (docs, t) => {
    const grant = await docs.grants.create(newGrant(`acct_${randomUUID()}`));
    const results = await Promise.all(Array.from({ length: 30 }, () => submit(docs, grant, { maxDepth: 1000, perAccount: 5 })));
    t.is(results.filter((r) => r.result.ok).length, 5);
    for (const r of results.filter((x) => !x.result.ok)) t.like(r.result, { ok: false, queueFull: 'account' });
    t.is((await docs.grants.get(grant.id))!.usedTokens, 5 * PRICE);
    t.is(await docs.jobs.countActiveByAccount(grant.accountId), 5);
    t.deepEqual(await docs.jobs.getMany(results.filter((r) => !r.result.ok).map((r) => r.job.id)), [], 'a refused submission stores no job');
  });

  it('the queue depth limit holds under concurrency across accounts: exactly the depth is accepted', async (docs, t) => {
    const grants = await Promise.all([0, 1, 2].map(() => docs.grants.create(newGrant(`acct_${randomUUID()}`))));
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => submit(docs, grants[i % 3], { maxDepth: 8, perAccount: 1000 })));
    t.is(results.filter((r) => r.result.ok).length, 8);
    for (const r of results.filter((x) => !x.result.ok)) t.like(r.result, { ok: false, queueFull: 'depth' });
    const charged = await Promise.all(grants.map(async (g) => (await docs.grants.get(g.id))!.usedTokens));
    t.is(charged.reduce((a, b) => a + b, 0), 8 * PRICE);
    t.is(await docs.jobs.countActive(), 8);
  });

  it('both limits at once under concurrency: neither is exceeded, and once the burst settles the queue fills to exactly its depth', async (docs, t) => {
    const [a, b] = await Promise.all([docs.grants.create(newGrant(`acct_${randomUUID()}`)), docs.grants.create(newGrant(`acct_${randomUUID()}`))]);
    const limits: QueueLimits = { maxDepth: 8, perAccount: 5 };
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => submit(docs, i % 2 ? a : b, limits)));
    const accepted = (g: Grant) => results.filter((r) => r.result.ok && r.job.accountId === g.accountId).length;
    t.true(accepted(a) <= 5 && accepted(b) <= 5);
    t.true(accepted(a) + accepted(b) <= 8);
    for (const r of results.filter((x) => !x.result.ok)) t.true('queueFull' in r.result, 'refused for the queue, not the charge');
    t.is((await docs.grants.get(a.id))!.usedTokens + (await docs.grants.get(b.id))!.usedTokens, (accepted(a) + accepted(b)) * PRICE);
    // Submitted one at a time now, the counters tell the exact truth.
    for (let i = 0; i < 10; i++) await submit(docs, a, limits);
    for (let i = 0; i < 10; i++) await submit(docs, b, limits);
    t.is(await docs.jobs.countActive(), 8);
    t.true((await docs.jobs.countActiveByAccount(a.accountId)) <= 5 && (await docs.jobs.countActiveByAccount(b.accountId)) <= 5);
  });

  it('a content-cache hit (completed at once) takes no queue slot', async (docs, t) => {
    const grant = await docs.grants.create(newGrant(`acct_${randomUUID()}`));
    const limits: QueueLimits = { maxDepth: 1000, perAccount: 1 };
    t.true((await submit(docs, grant, limits)).result.ok);
    t.like((await submit(docs, grant, limits)).result, { ok: false, queueFull: 'account' });
    const hit = await submit(docs, grant, limits, { status: 'completed', audioKey: 'jobs/x.wav', durationSeconds: 1.5, processingMs: 0, completedAt: NOW });
    t.true(hit.result.ok);
    t.like(await docs.jobs.get(hit.job.id), { status: 'completed', charge: hit.charge });
    // No message to render it, but its accept's outcome event still has to go out.
    await relayHandOver(docs);
    t.true((await docs.jobs.unpublished(FUTURE, 10)).includes(hit.job.id), 'its publication is pending like any accept\'s');
    await docs.jobs.markPublished([hit.job.id]);
    t.false((await docs.jobs.unpublished(FUTURE, 10)).includes(hit.job.id));
  });

  it('a job that ends gives its queue slot back exactly once', async (docs, t) => {
    const grant = await docs.grants.create(newGrant(`acct_${randomUUID()}`));
    const limits: QueueLimits = { maxDepth: 1000, perAccount: 1 };
    const first = await submit(docs, grant, limits);
    t.true(first.result.ok);
    t.true(await docs.jobs.complete(first.job.id, { audioKey: 'a', durationSeconds: 1, processingMs: 5, completedAt: NOW }));
    t.false(await docs.jobs.fail(first.job.id, { errorCode: 'synthesis_failed', error: 'late', completedAt: NOW }));
    const second = await submit(docs, grant, limits);
    t.true(second.result.ok, 'the completed job freed its slot');
    t.like((await submit(docs, grant, limits)).result, { ok: false, queueFull: 'account' }, 'ending twice did not free two');
    await docs.jobs.claim(second.job.id, 'w1', FUTURE, NOW);
    t.true(await docs.jobs.fail(second.job.id, { errorCode: 'synthesis_failed', error: 'x', completedAt: NOW }));
    t.true((await submit(docs, grant, limits)).result.ok, 'the failed job freed its slot');
  });

  it('a lost charge stores nothing once abandoned and holds no slot', async (docs, t) => {
    const grant = await docs.grants.create(newGrant(`acct_${randomUUID()}`, { totalTokens: PRICE - 1 }));
    const limits: QueueLimits = { maxDepth: 1000, perAccount: 1 };
    const job = newJob(grant.accountId);
    const submission = docs.jobs.submission(job, limits);
    const { cmd, charge } = attemptOn(grant);
    t.like(await submission.write(cmd, charge), { ok: false });
    await submission.abandon();
    t.is(await docs.jobs.get(job.id), null);
    t.is(await docs.jobs.countActiveByAccount(grant.accountId), 0);
    const payer = await docs.grants.create(newGrant(grant.accountId));
    t.true((await submit(docs, payer, limits)).result.ok, 'the slot is free');
  });

  it('crash repair drops a submission whose charge never landed, gives its slot back, and keeps one whose charge did', async (docs, t) => {
    const poor = await docs.grants.create(newGrant(`acct_${randomUUID()}`, { totalTokens: 10 }));
    const limits: QueueLimits = { maxDepth: 1000, perAccount: 2 };
    // The process "dies" after the write, before abandoning.
    const cut = newJob(poor.accountId);
    const { cmd, charge } = attemptOn(poor);
    t.like(await docs.jobs.submission(cut, limits).write(cmd, charge), { ok: false });
    const rich = await docs.grants.create(newGrant(poor.accountId));
    const kept = await submit(docs, rich, limits);
    t.true(kept.result.ok);

    await docs.jobs.repair(NOW, NOW);
    t.like(await docs.jobs.get(kept.job.id), { status: 'queued', charge: kept.charge }, 'not stale yet: nothing changes');
    await docs.jobs.repair(FUTURE, FUTURE);
    const dropped = await docs.jobs.get(cut.id);
    t.true(dropped === null || (dropped.status === 'failed' && dropped.charge === null), 'the uncharged submission is gone or failed without a charge');
    t.like(await docs.jobs.get(kept.job.id), { status: 'queued', charge: kept.charge }, 'a charged submission stays');
    t.is(await docs.jobs.countActiveByAccount(poor.accountId), 1);
    t.true((await submit(docs, rich, limits)).result.ok, 'the dropped submission gave its slot back');
    t.is((await docs.grants.get(poor.id))!.usedTokens, 0);
  });

  it('Idempotency-Key: one job per key; a second submission under it is refused before any charge, and the key names the first job', async (docs, t) => {
    const grant = await docs.grants.create(newGrant(`acct_${randomUUID()}`));
    const key = idempotencyKey('fp-first');
    t.is(await docs.jobs.acceptedWithKey(key.key, key.keptSince), null, 'no job holds a new key');
    const first = await submit(docs, grant, ROOMY, {}, key);
    t.true(first.result.ok);
    const second = await submit(docs, grant, ROOMY, {}, { ...key, fingerprint: 'fp-second' });
    t.deepEqual(second.result, { ok: false, keyTaken: true });
    t.is(await docs.jobs.get(second.job.id), null, 'the refused submission stored no job');
    t.is((await docs.grants.get(grant.id))!.usedTokens, PRICE, 'charged once');
    t.is(await docs.jobs.countActiveByAccount(grant.accountId), 1);
    const holder = await holderOf(docs, key);
    t.like(holder, { fingerprint: 'fp-first', job: { id: first.job.id, status: 'queued', charge: first.charge } });
    t.true((await submit(docs, grant, ROOMY)).result.ok, 'submissions without a key are not held to it');
  });

  it('Idempotency-Key: concurrent submissions under one key accept exactly one job and charge once', async (docs, t) => {
    const grant = await docs.grants.create(newGrant(`acct_${randomUUID()}`));
    const key = idempotencyKey();
    const results = await Promise.all(Array.from({ length: 12 }, () => submit(docs, grant, ROOMY, {}, key)));
    const accepted = results.filter((r) => r.result.ok);
    t.is(accepted.length, 1);
    for (const r of results.filter((x) => !x.result.ok)) t.deepEqual(r.result, { ok: false, keyTaken: true });
    t.is((await docs.grants.get(grant.id))!.usedTokens, PRICE);
    t.like(await holderOf(docs, key), { job: { id: accepted[0]!.job.id } });
  });

  it('Idempotency-Key: a refused submission (queue full, or unpaid) leaves its key free', async (docs, t) => {
    const grant = await docs.grants.create(newGrant(`acct_${randomUUID()}`));
    const key = idempotencyKey();
    t.like((await submit(docs, grant, { maxDepth: 1000, perAccount: 0 }, {}, key)).result, { ok: false, queueFull: 'account' });
    t.is(await holderOf(docs, key), null);
    const poor = await docs.grants.create(newGrant(grant.accountId, { totalTokens: PRICE - 1 }));
    t.like((await submit(docs, poor, ROOMY, {}, key)).result, { ok: false });
    t.is(await holderOf(docs, key), null);
    const kept = await submit(docs, grant, ROOMY, {}, key);
    t.true(kept.result.ok, 'the key is free for the retry');
    t.like(await holderOf(docs, key), { job: { id: kept.job.id } });
  });

  it('Idempotency-Key: a claim older than the key is kept no longer holds it', async (docs, t) => {
    const grant = await docs.grants.create(newGrant(`acct_${randomUUID()}`));
    const key = idempotencyKey('fp-old', '2026-11-20T10:00:00.000Z');
    const old = await submit(docs, grant, ROOMY, { createdAt: '2026-11-20T09:00:00.000Z' }, key);
    t.true(old.result.ok);
    t.is(await holderOf(docs, key), null, 'claimed before keptSince: expired');
    t.like(await docs.jobs.acceptedWithKey(key.key, '2026-11-19T10:00:00.000Z'), { job: { id: old.job.id } }, 'still held for an earlier keptSince');
    const fresh = await submit(docs, grant, ROOMY, {}, { ...key, fingerprint: 'fp-new' });
    t.true(fresh.result.ok);
    t.like(await holderOf(docs, key), { fingerprint: 'fp-new', job: { id: fresh.job.id } });
  });

  it('Idempotency-Key: crash repair frees the key of a submission whose charge never landed', async (docs, t) => {
    const poor = await docs.grants.create(newGrant(`acct_${randomUUID()}`, { totalTokens: 10 }));
    const key = idempotencyKey();
    // The process "dies" after the write, before abandoning.
    const cut = newJob(poor.accountId);
    const { cmd, charge } = attemptOn(poor);
    t.like(await docs.jobs.submission(cut, ROOMY, key).write(cmd, charge), { ok: false });
    await docs.jobs.repair(FUTURE, FUTURE);
    t.is(await holderOf(docs, key), null);
    const rich = await docs.grants.create(newGrant(poor.accountId));
    const kept = await submit(docs, rich, ROOMY, {}, key);
    t.true(kept.result.ok, 'the key is free once the dropped submission is repaired');
  });

  it('the ledger relay hand-over returns the charge entries no job holds', async (docs, t) => {
    const grant = await docs.grants.create(newGrant(`acct_${randomUUID()}`));
    const { charge, result } = await submit(docs, grant, ROOMY);
    t.true(result.ok);
    const entries = (await docs.outbox.pending(100)).filter((e) => e.grantId === grant.id);
    const stray: LedgerEntry = { ...entries[0], id: `chg_${randomUUID()}`, jobId: `job_${randomUUID()}` };
    const refund: LedgerEntry = { ...entries[0], id: `rfd_${randomUUID()}`, kind: 'refund', chargeId: charge.id, jobId: `job_${randomUUID()}` };
    t.deepEqual((await docs.jobs.confirmCharges([...entries, stray, refund])).map((e) => e.id), [stray.id]);
  });
}

submissionContract('sqlite (memory)', async () => {
  const db = openMemoryDb();
  return { docs: createSqliteDocuments(db), close: async () => void db.close() };
});

const mongoUrl = process.env.MONGODB_URL;
if (mongoUrl) {
  // ava wants tests declared synchronously; the driver connects on the first operation.
  const client = new MongoClient(mongoUrl);
  test.after.always(() => client.close());
  const openMongo = async () => {
    const name = `contract_sub_${randomUUID().slice(0, 8)}`;
    return { docs: await createMongoDocuments(client, name), close: async () => void (await client.db(name).dropDatabase()), name };
  };
  submissionContract('mongo', openMongo);

  test('mongo: queue counters that drifted (a process died between two writes) are healed by repair', async (t) => {
    const { docs, close, name } = await openMongo();
    t.teardown(close);
    const grant = await docs.grants.create(newGrant(`acct_${randomUUID()}`));
    const limits: QueueLimits = { maxDepth: 1000, perAccount: 2 };
    t.true((await submit(docs, grant, limits)).result.ok);
    // A job ended but its process died before giving the slot back: the counter says 2, one job holds a slot.
    await client.db(name).collection<{ _id: string; n: number }>('tts_queue_slots').updateOne({ _id: grant.accountId }, { $inc: { n: 1 } });
    t.like((await submit(docs, grant, limits)).result, { ok: false, queueFull: 'account' });
    await docs.jobs.repair(NOW, NOW);
    await docs.jobs.repair(NOW, NOW);
    t.true((await submit(docs, grant, limits)).result.ok, 'healed after two runs that saw the same drift');
    t.like((await submit(docs, grant, limits)).result, { ok: false, queueFull: 'account' }, 'and only by the drift');
  });
} else {
  console.log('job submission contract: MongoDB adapter skipped, MONGODB_URL is not set');
}
