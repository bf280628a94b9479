/**
 * Issue 9: SIGKILL during a burst of POST /tts, then a restart. Every charge
 * must end matched by exactly one job that completes or is refunded, no job
 * may stay queued without its bus message, and every grant must reconcile
 * with the ledger. Runs on the embedded stack and on MongoDB (no
 * multi-document transactions there: job first, then the charge, then the
 * relay's hand-over and the crash repair). Every request carries an
 * Idempotency-Key, and all are sent again after the restart: the in-memory
 * record of each key died with the process, so the retries are answered
 * from the jobs themselves (the key is recorded in the accept's own write).
 */
import test from 'ava';
import path from 'node:path';
import Database from 'better-sqlite3';
import { MongoClient } from 'mongodb';
import { crashScene } from '../helpers/crash-scene.ts';
import { recordStacks } from '../helpers/stacks.ts';
import { waitFor } from '../helpers/wait.ts';
import { coreServices } from '../../core/services.ts';
import type { JobRecord } from '../../core/ports/jobs.ts';
import type { LedgerEntry } from '../../core/ports/documents.ts';

const ADMIN = 'crash-test-admin-token-123';
const BURST = 600;
/** responses the client sees before the process is killed; the rest of the burst is in flight */
const KILL_AFTER = 60;

const common = (dataDir: string, stackEnv: Record<string, string>) => ({
  ...stackEnv, DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN, URL_SIGNING_SECRET: 'crash-test-signing-secret',
  RATE_SPEECH_PER_MINUTE: '100000', USER_QUEUE_MAX: '1000', QUEUE_MAX_DEPTH: '100000',
});

/** Every job of the given accounts, read from the store directly (no port lists jobs by account). */
async function jobsOf(accountIds: string[], stackEnv: Record<string, string>, dataDir: string): Promise<JobRecord[]> {
  if (stackEnv.MONGODB_URL) {
    const client = new MongoClient(stackEnv.MONGODB_URL);
    try {
      const docs = await client.db(stackEnv.MONGODB_DB).collection('tts_jobs').find({ accountId: { $in: accountIds }, status: { $exists: true } }).toArray();
      return docs.map((d) => ({ ...d, id: d._id }) as unknown as JobRecord);
    } finally {
      await client.close();
    }
  }
  const db = new Database(path.join(dataDir, 'platform.db'), { readonly: true });
  try {
    const rows = db.prepare(`SELECT id, account_id AS accountId, status, charge, refunded FROM tts_jobs WHERE account_id IN (${accountIds.map(() => '?').join(',')})`).all(...accountIds) as Array<Record<string, any>>;
    return rows.map((r) => ({ ...r, charge: r.charge ? JSON.parse(r.charge) : null, refunded: r.refunded === 1 }) as JobRecord);
  } finally {
    db.close();
  }
}

for (const stack of recordStacks('submission crash')) {
  test(`${stack.name}: SIGKILL during a burst of ${BURST} POST /tts; after restart every charge has exactly one job that completes or is refunded, and the ledger reconciles`, async (t) => {
    t.timeout(200_000);
    const { use, dataDir, start, restart } = crashScene(t, stack, 'vieneu-crash-');

    // The API alone: nothing renders yet, and the ledger writer is not running.
    const child = await start({ ...common(dataDir, use.env), ROLES: 'api' });
    const base = child.url!;
    const admin = (p: string, init: RequestInit = {}) =>
      fetch(`${base}/admin/v1${p}`, { ...init, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' } });
    const accounts = await Promise.all([0, 1, 2].map(async (i) =>
      (await admin('/bootstrap', { method: 'POST', body: JSON.stringify({ name: `Crash ${i}`, grant: { totalTokens: 10_000_000 } }) })).json()));

    let answered = 0;
    let killed: Promise<void> | null = null;
    const request = (url: string, i: number) => fetch(`${url}/api/v1/tts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${accounts[i % 3].apiKey}`, 'content-type': 'application/json', 'idempotency-key': `crash-burst-${i}` },
      body: JSON.stringify({ text: `Câu thử số ${i} trong loạt gửi trước khi tiến trình bị dừng đột ngột.` }),
    });
    const outcomes = await Promise.all(Array.from({ length: BURST }, async (_, i) => {
      try {
        const res = await request(base, i);
        const body = await res.json();
        if (++answered === KILL_AFTER) killed = child.kill('SIGKILL');
        return { status: res.status, jobId: body.jobId as string | undefined };
      } catch {
        return { status: 0, jobId: undefined };
      }
    }));
    await killed;
    const accepted = outcomes.filter((o) => o.status === 201);
    t.true(accepted.length >= KILL_AFTER - 1, `${accepted.length} answered 201 before the kill`);
    t.true(outcomes.some((o) => o.status === 0), 'the kill cut requests off mid-burst');
    t.log(`${accepted.length} accepted, ${outcomes.filter((o) => o.status === 0).length} cut off`);

    // Restart with every role: the recovery republishes, the worker renders, the ledger writer catches up.
    const restarted = await restart({
      ...common(dataDir, use.env), INFERENCE_CONCURRENCY: '4',
      JOBS_RECOVERY_INTERVAL_SECONDS: '0.5', JOBS_REPUBLISH_AFTER_SECONDS: '1', JOBS_OUTCOME_REPUBLISH_AFTER_SECONDS: '1', JOBS_SUBMISSION_TIMEOUT_SECONDS: '2',
    });
    const p = restarted;
    const accountIds = accounts.map((a) => a.accountId as string);
    const grantIds = accounts.map((a) => a.grantId as string);
    const jobs = await waitFor<JobRecord[] | undefined>(async () => {
      const all = await jobsOf(accountIds, use.env, dataDir);
      return all.every((j) => j.status === 'completed' || j.status === 'failed') ? all : undefined;
    }, { timeoutMs: 140_000, intervalMs: 500, what: 'every job to finish after the restart' }) as JobRecord[];

    const documents = await p.platform.service(coreServices.documents);
    // Refunds of failed jobs, and charges confirmed late, go through the outbox, the bus and the ledger writer.
    const ledger = await waitFor<LedgerEntry[] | undefined>(async () => {
      if ((await documents.outbox.pending(1)).length > 0) return undefined;
      const entries: LedgerEntry[] = (await Promise.all(grantIds.map((g) => documents.ledger.listByGrant(g)))).flat();
      const grants = await Promise.all(grantIds.map((g) => documents.grants.get(g)));
      const net = entries.reduce((sum, e) => sum + (e.kind === 'charge' ? e.tokens : -e.tokens), 0);
      return net === grants.reduce((sum, g) => sum + g!.usedTokens, 0) ? entries : undefined;
    }, { timeoutMs: 30_000, intervalMs: 200, what: 'the ledger to hold every charge and refund' }) as LedgerEntry[];

    const charges = ledger.filter((e) => e.kind === 'charge');
    const refunded = new Set(ledger.filter((e) => e.kind === 'refund').map((e) => e.chargeId));
    const holders = new Map<string, JobRecord[]>();
    for (const job of jobs) if (job.charge) holders.set(job.charge.id, [...(holders.get(job.charge.id) ?? []), job]);
    for (const charge of charges) {
      const held = holders.get(charge.id) ?? [];
      t.is(held.length, 1, `charge ${charge.id} is held by exactly one job`);
      const [job] = held;
      if (job) t.true(job.status === 'completed' || refunded.has(charge.id), `job ${job.id} completed, or its charge ${charge.id} was refunded`);
    }
    const charged = new Set(charges.map((c) => c.id));
    for (const job of jobs.filter((j) => j.charge)) t.true(charged.has(job.charge!.id), `job ${job.id}'s charge is in the ledger`);
    for (const { jobId } of accepted) t.truthy(jobs.find((j) => j.id === jobId && j.charge), `accepted job ${jobId} exists and holds its charge`);
    t.is(refunded.size, ledger.filter((e) => e.kind === 'refund').length, 'no charge refunded twice');
    t.true(charges.length >= accepted.length);

    for (const grantId of grantIds) {
      const reconcile = await (await fetch(`${p.url}/admin/v1/grants/${grantId}/reconcile`, { headers: { authorization: `Bearer ${ADMIN}` } })).json();
      t.true(reconcile.balanced, `grant ${grantId} reconciles with the ledger`);
    }
    const jobsStore = await p.platform.service(coreServices.jobs);
    t.is(await jobsStore.countActive(), 0);
    t.deepEqual(await jobsStore.unpublished('9999-01-01T00:00:00.000Z', 10), [], 'nothing left to publish');
    t.log(`${charges.length} charges, ${jobs.filter((j) => j.status === 'completed').length} jobs completed, ${refunded.size} refunded, ${jobs.filter((j) => !j.charge).length} submissions dropped uncharged`);

    // Usage counts every accepted submission once, with what it cost: those answered before the kill, and those
    // whose answer or outcome event the kill cut off (their job's publication brings the event back).
    for (const account of accounts) {
      const own = jobs.filter((j) => j.charge && j.accountId === account.accountId);
      const report = await waitFor(async () => {
        const body = await (await fetch(`${p.url}/api/v1/usage`, { headers: { authorization: `Bearer ${account.apiKey}` } })).json();
        return body.totals.requests >= own.length ? body : undefined;
      }, { timeoutMs: 20_000, intervalMs: 200, what: `usage to count the ${own.length} accepted submissions of ${account.accountId}` });
      const cost = own.reduce((sum, j) => sum + j.charge!.tokens, 0);
      t.like(report.totals, { requests: own.length, tokenCost: cost }, `usage of ${account.accountId}: one request per charged job`);
    }

    // Every request of the burst again, with its key: an accepted one is replayed, whether or not its answer
    // reached the client, and one that never got through is accepted now. One charged job per key in the end.
    const retries = await Promise.all(Array.from({ length: BURST }, async (_, i) => {
      const res = await request(p.url, i);
      const body = await res.json();
      return { status: res.status, replayed: res.headers.get('idempotent-replayed') === 'true', jobId: body.jobId as string | undefined, code: body.code };
    }));
    t.deepEqual(retries.filter((r) => r.status !== 201), [], 'every retry is answered 201');
    outcomes.forEach((o, i) => {
      if (o.status === 201) t.like(retries[i], { replayed: true, jobId: o.jobId }, `request ${i} was accepted before the kill: its retry is a replay`);
    });
    const after = (await jobsOf(accountIds, use.env, dataDir)).filter((j) => j.charge);
    t.is(new Set(retries.map((r) => r.jobId)).size, BURST, 'one job per key');
    t.deepEqual(after.map((j) => j.id).sort(), retries.map((r) => r.jobId!).sort(), 'every charged job is the one its key names');
    t.log(`${retries.filter((r) => r.replayed).length} retries replayed (${accepted.length} were answered before the kill), ${retries.filter((r) => !r.replayed).length} accepted afresh`);
  });
}
