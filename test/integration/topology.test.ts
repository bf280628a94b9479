import test, { type ExecutionContext } from 'ava';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { MongoClient } from 'mongodb';
import { javaToolsMissing } from '../helpers/servers/java.ts';
import { findClickHouseServer } from '../helpers/private-clickhouse.ts';
import { startBackboneServers, type BackboneServers } from '../helpers/backbone.ts';
import { startTopology, type RoleProcess, type Topology } from '../helpers/topology.ts';
import { mixedPlan, Traffic, type Account } from '../helpers/topology-traffic.ts';
import { makeTestPki, startReceiver, type Receiver, type TestPki } from '../helpers/webhook-receiver.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * The production topology as separate processes on loopback: 2 API, 2
 * inference (one consumer group on tts.jobs), 1 pipelines, on Kafka, the
 * MongoDB-wire server, ClickHouse and Redis. Mixed traffic (synchronous
 * speech, streams, jobs reported by webhook, usage queries) runs through
 * three faults: an inference process SIGKILLed mid-render, the Kafka broker
 * stopped and restarted under traffic, ClickHouse stopped under traffic.
 * Afterwards every job completed once and was reported once, each ledger
 * equals its grant's usage and the tokens the requests cost, and /usage
 * counts exactly the requests sent.
 */

/** Longer than kafkajs's own retries of a send (about 10 s): the bus adapter must keep the events itself. */
const KAFKA_OUTAGE_MS = 15_000;

const TITLE = 'distributed topology: jobs complete once, ledger = grants = requests, usage = requests, webhooks once, through an inference SIGKILL, a Kafka restart and a ClickHouse stop';

const missing = javaToolsMissing() ?? (findClickHouseServer() ? null : 'no clickhouse-server binary on this machine');
if (missing) {
  console.log(`topology: skipped, ${missing}`);
  test.skip(TITLE, () => {});
} else {
  let servers: BackboneServers | undefined;
  let topology: Topology | undefined;
  let receiver: Receiver | undefined;
  let pki: TestPki | undefined;

  test.after.always(async () => {
    await topology?.stop();
    await servers?.stop();
    await receiver?.close();
    pki?.cleanup();
  });

  test(TITLE, async (t) => {
    t.timeout(600_000);
    try {
      await scenario(t);
    } catch (error) {
      // The processes' own words are the quickest way to the cause: their errors here, everything in files.
      const dir = mkdtempSync(path.join(tmpdir(), 'topology-logs-'));
      for (const proc of topology?.all() ?? []) {
        writeFileSync(path.join(dir, `${proc.name}.log`), proc.child.output());
        t.log(`--- ${proc.name} (whole log in ${dir}/${proc.name}.log)\n${errorsOf(proc)}`);
      }
      throw error;
    }
  });

  async function scenario(t: ExecutionContext): Promise<void> {
    const began = Date.now();
    const step = (what: string) => t.log(`${((Date.now() - began) / 1000).toFixed(1)} s: ${what}`);
    pki = makeTestPki();
    receiver = await startReceiver(pki.trusted);
    servers = await startBackboneServers({ mongoUrl: process.env.MONGODB_URL });
    step(`servers up:\n  ${servers.describe().join('\n  ')}`);
    topology = await startTopology({
      servers,
      env: {
        LOG_LEVEL: 'info',
        WEBHOOK_ALLOW_LOOPBACK: '1',
        WEBHOOK_CA_FILE: pki.caFile,
        // A dead worker's claim lapses quickly; Kafka's own session timeout (30 s) moves its partitions.
        JOB_LEASE_SECONDS: '3',
        JOB_RETRY_BASE_MS: '200',
        INFERENCE_CONCURRENCY: '2',
        SHUTDOWN_TIMEOUT_SECONDS: '10',
        // Only the faults may disturb a request: no rate or queue limit.
        RATE_SPEECH_PER_MINUTE: '100000',
        ACCOUNT_ROUTES_PER_MINUTE: '100000',
        USER_QUEUE_MAX: '10000',
      },
    });
    const top = topology;
    step(`processes up: ${top.all().map((p) => p.name).join(', ')}`);

    const accounts: Account[] = [];
    for (const label of ['a', 'b']) {
      const created = await top.bootstrap(`topology ${label}`, 50_000_000);
      const hook = await top.api(accounts.length, '/webhooks', { method: 'POST', key: created.apiKey, json: { url: receiver.url(`/hooks/${label}`) } });
      t.is(hook.status, 201, `webhook endpoint of ${label}`);
      accounts.push({ label, ...created });
    }
    const traffic = new Traffic(top, `${process.pid}-${Date.now()}`);

    // 1. Steady traffic on the whole fleet, usage queried on both API processes meanwhile.
    await Promise.all([
      traffic.run(mixedPlan(12, accounts), 'steady'),
      ...accounts.map(async (account, i) => t.is((await top.api(i, '/usage?scope=account', { key: account.apiKey })).status, 200)),
    ]);
    step('steady traffic sent');

    // 2. SIGKILL the inference process that is rendering, mid-render (once the steady jobs are done, it can only be a long one).
    await waitForJobs(top, accounts, traffic.jobs().map((s) => s.jobId!), 120_000);
    const longJobs = await traffic.run(accounts.flatMap((account) => [0, 1].map((i) => ({ kind: 'job' as const, account, api: i, sentences: 30 }))), 'kill', 4);
    // The job's lease names the process that holds it (worker_<host>_<pid>_…); espeak-ng children
    // alone cannot tell, since every engine keeps a spare one waiting.
    const rendering = (await waitFor(async () => (await jobDocs(servers!, longJobs.map((s) => s.jobId!))).find((job) => job.status === 'processing'), {
      timeoutMs: 60_000, intervalMs: 50, what: 'a long job to start rendering',
    }))!;
    const victim = top.inference.find((p) => rendering.leaseOwner.includes(`_${p.child.child.pid}_`));
    if (!victim) throw new Error(`no inference process holds the lease ${rendering.leaseOwner}`);
    t.true(espeakChildren(victim.child.child.pid!) > 0, `${victim.name} runs espeak-ng while it renders`);
    const inFlight = (await jobDocs(servers, longJobs.map((s) => s.jobId!))).filter((job) => job.status === 'processing' && job.leaseOwner === rendering.leaseOwner).map((job) => job._id);
    await victim.child.kill('SIGKILL');
    step(`SIGKILLed ${victim.name} while rendering; jobs processing then: ${inFlight.length}`);
    t.true(inFlight.length > 0, 'a job was being rendered when the process died');
    const survivor = top.inference.find((p) => p !== victim)!;
    // Synchronous speech meanwhile: the API passes the dead instance over.
    const duringKill = await traffic.run(mixedPlan(4, accounts, ['speech', 'stream']), 'kill');
    t.true(duringKill.every((s) => s.ok), `speech while an inference process is down: ${JSON.stringify(traffic.failures())}`);
    const afterKill = await waitForJobs(top, accounts, longJobs.map((s) => s.jobId!), 150_000);
    t.deepEqual([...new Set(afterKill.map((job) => job.status))], ['completed'], 'every job of the killed process completed');
    const redone = (await jobDocs(servers, inFlight)).filter((job) => job.attempts >= 2);
    t.true(redone.length > 0, `a job cut by the kill was rendered again by ${survivor.name}`);
    step(`jobs of the killed process completed on ${survivor.name}`);

    // 3. Stop the Kafka broker under traffic for longer than kafkajs retries on its own, then restart it.
    await traffic.run(mixedPlan(4, accounts), 'kafka');
    await servers.kafka.halt();
    const haltedAt = Date.now();
    step('Kafka broker stopped');
    const duringOutage = traffic.run(mixedPlan(8, accounts), 'kafka-down', 4);
    await new Promise((resolve) => setTimeout(resolve, KAFKA_OUTAGE_MS));
    await servers.kafka.resume();
    const resumedAt = Date.now();
    step(`Kafka broker restarted after ${((resumedAt - haltedAt) / 1000).toFixed(1)} s`);
    await duringOutage;
    // Accepted, not refused, and without waiting for the broker: a submission's publication waits in
    // the documents store (its outbox) and the relay hands it to Kafka once the broker is back.
    const outage = traffic.sent.filter((s) => s.phase === 'kafka-down').map((s) => ({ ...s, startedAt: s.startedAt - haltedAt, endedAt: s.endedAt - haltedAt }));
    const acceptedDuring = outage.filter((s) => s.kind === 'job' && s.status === 201 && s.endedAt < resumedAt - haltedAt);
    t.true(acceptedDuring.length > 0, `jobs submitted while the broker was down were accepted before it was back: ${JSON.stringify(outage)}`);
    await traffic.run(mixedPlan(4, accounts), 'kafka');
    step('traffic across the Kafka restart sent');

    // 4. Stop ClickHouse during traffic; usage catches up once it is back.
    await servers.clickhouse.stop();
    step('ClickHouse stopped');
    await traffic.run(mixedPlan(8, accounts), 'clickhouse');
    const usageDown = await top.api(0, '/usage?scope=account', { key: accounts[0]!.apiKey });
    await usageDown.arrayBuffer();
    t.not(usageDown.status, 200, 'GET /usage cannot answer while ClickHouse is down');
    await servers.clickhouse.start();
    step('ClickHouse started again');

    // Every request the clients sent was answered as it should have been.
    t.deepEqual(traffic.failures(), [], 'every request succeeded');

    // Every job completed, and was reported by exactly one webhook delivery.
    const allJobs = traffic.jobs().map((s) => s.jobId!);
    const finished = await waitForJobs(top, accounts, allJobs, 180_000);
    t.deepEqual(finished.filter((job) => job.status !== 'completed'), [], 'every job completed');
    await waitFor(() => new Set(deliveredJobs(receiver!)).size >= allJobs.length, { timeoutMs: 120_000, intervalMs: 200, what: `a webhook for each of ${allJobs.length} jobs` });
    step('every job completed and was reported');

    // The ledger in MongoDB equals each grant's usage and what the requests cost.
    for (const account of accounts) {
      const expected = traffic.charged(account.label);
      const reconciled = await waitFor(async () => {
        const r = (await (await top.admin(`/grants/${account.grantId}/reconcile`)).json()) as Reconcile;
        return r.ledgerNet === expected ? r : null;
      }, { timeoutMs: 60_000, intervalMs: 250, what: `the ledger of ${account.label} to reach ${expected}` }).catch(async () => (await top.admin(`/grants/${account.grantId}/reconcile`)).json() as Promise<Reconcile>);
      t.like(reconciled, { usedTokens: expected, ledgerCharged: expected, ledgerRefunded: 0, balanced: true }, `ledger of ${account.label}`);
    }

    // /usage in ClickHouse counts exactly the requests sent, every queued job closed.
    for (const account of accounts) {
      const sent = traffic.of(account.label).length;
      const report = await waitFor(async () => {
        const r = await usageOf(top, account);
        return r && r.totals.requests === sent && r.totals.queued === 0 ? r : null;
      }, { timeoutMs: 90_000, intervalMs: 250, what: `usage of ${account.label} to count ${sent} requests` }).catch(() => usageOf(top, account));
      t.like(report?.totals, { requests: sent, ok: sent, queued: 0, denied: 0, error: 0, tokenCost: traffic.charged(account.label) }, `usage totals of ${account.label}`);
      const routes = Object.fromEntries((report?.byRoute ?? []).map((r) => [r.route, r.requests]));
      t.deepEqual(routes, traffic.byRoute(account.label), `usage by route of ${account.label}`);
    }
    step('ledger and usage reconciled');

    // Nothing arrives late or twice: the same after consumers had time to redeliver.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    for (const account of accounts) t.is((await usageOf(top, account))?.totals.requests, traffic.of(account.label).length, `usage of ${account.label} still exact`);
    const deliveries = deliveredJobs(receiver);
    t.is(deliveries.length, allJobs.length, 'one webhook delivery per job, none repeated');
    t.deepEqual([...deliveries].sort(), [...allJobs].sort(), 'the deliveries name exactly the jobs sent');
    t.true(receiver.received.every((r) => r.path === `/hooks/${ownerOf(traffic, r)}`), 'each delivery went to its own account');

    // On the bus: one outcome event per request, none lost, none published twice.
    const outcomes = await readTopic(servers.kafka.brokers, 'request.outcomes');
    const ids = outcomes.map((o) => o.id);
    t.is(new Set(ids).size, ids.length, 'no outcome event published twice');
    t.is(ids.length, traffic.sent.length, 'one outcome event per request');

    // The distributed mode never opened the embedded file.
    t.deepEqual(readdirSync(top.env.DATA_DIR!), [], 'nothing written to DATA_DIR');
    for (const proc of top.all().filter((p) => p !== victim)) {
      t.is((await fetch(`${proc.opsUrl}/readyz`)).status, 200, `${proc.name} ready at the end`);
    }
    step('done');
  }
}

interface Reconcile { usedTokens: number; ledgerCharged: number; ledgerRefunded: number; ledgerNet: number; balanced: boolean }
interface UsageReport {
  totals: { requests: number; ok: number; queued: number; denied: number; error: number; tokenCost: number };
  byRoute: Array<{ route: string; requests: number }>;
}

async function usageOf(top: Topology, account: Account): Promise<UsageReport | null> {
  const res = await top.api(1, '/usage?scope=account', { key: account.apiKey });
  return res.status === 200 ? ((await res.json()) as UsageReport) : null;
}

/** Polls GET /tts?ids= on both API processes until no job is queued or processing. */
async function waitForJobs(top: Topology, accounts: Account[], jobIds: string[], timeoutMs: number): Promise<Array<{ jobId: string; status: string }>> {
  const poll = async (round: number) => {
    const views: Array<{ jobId: string; status: string }> = [];
    for (const account of accounts) {
      for (let from = 0; from < jobIds.length; from += 50) {
        const res = await top.api(round, `/tts?ids=${jobIds.slice(from, from + 50).join(',')}`, { key: account.apiKey });
        views.push(...((await res.json()) as { jobs: Array<{ jobId: string; status: string }> }).jobs);
      }
    }
    return views;
  };
  let round = 0;
  return (await waitFor(async () => {
    const views = await poll(round++);
    return views.length === jobIds.length && views.every((v) => v.status === 'completed' || v.status === 'failed') ? views : null;
  }, { timeoutMs, intervalMs: 500, what: `${jobIds.length} jobs to finish` }))!;
}

/** Job ids of the tts.job.completed deliveries the receiver got, one entry per delivery. */
function deliveredJobs(receiver: Receiver): string[] {
  return receiver.received
    .map((r) => JSON.parse(r.rawBody.toString('utf8')) as { type: string; data: { job_id: string } })
    .filter((body) => body.type === 'tts.job.completed')
    .map((body) => body.data.job_id);
}

function ownerOf(traffic: Traffic, request: Receiver['received'][number]): string {
  const jobId = (JSON.parse(request.rawBody.toString('utf8')) as { data: { job_id: string } }).data.job_id;
  return traffic.sent.find((s) => s.jobId === jobId)?.account ?? 'unknown';
}

/** Live espeak-ng processes whose parent is `pid`: the engine renders through them. */
/** Live espeak-ng processes under `pid`: its children, or the children of its process launcher (core/speechkit/launcher.ts). */
function espeakChildren(pid: number): number {
  const procs: Array<{ pid: number; name: string; state: string; ppid: number }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const [state, ppid] = stat.slice(close + 2).split(' ');
      procs.push({ pid: Number(entry), name: stat.slice(stat.indexOf('(') + 1, close), state: state!, ppid: Number(ppid) });
    } catch {
      // gone meanwhile
    }
  }
  const under = new Set([pid, ...procs.filter((p) => p.ppid === pid).map((p) => p.pid)]);
  return procs.filter((p) => p.name.startsWith('espeak') && under.has(p.ppid) && p.state !== 'Z').length;
}

async function jobDocs(servers: BackboneServers, ids: string[]): Promise<Array<{ _id: string; status: string; attempts: number; leaseOwner: string }>> {
  const client = new MongoClient(servers.mongo.url);
  try {
    return await client.db(servers.mongo.db).collection<{ _id: string; status: string; attempts: number; leaseOwner: string }>('tts_jobs')
      .find({ _id: { $in: ids } }, { projection: { status: 1, attempts: 1, leaseOwner: 1 } }).toArray();
  } finally {
    await client.close();
  }
}

/** Every message of a topic, read from the beginning by a group of its own. */
async function readTopic(brokers: string, topic: string): Promise<Array<{ id: string }>> {
  const kafka = new Kafka({ clientId: 'topology-test-reader', brokers: [brokers], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const offsets = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  const total = offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
  const consumer = kafka.consumer({ groupId: `topology-test-reader-${Date.now()}` });
  const messages: Array<{ id: string }> = [];
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void messages.push(JSON.parse(message.value!.toString('utf8')) as { id: string }) });
    await waitFor(() => messages.length >= total, { timeoutMs: 60_000, intervalMs: 100, what: `${total} messages of ${topic}` });
  } finally {
    await consumer.disconnect();
  }
  return messages;
}

/** The last error and warning lines of a process, leaving out the Kafka client's connection complaints during the outage. */
function errorsOf(proc: RoleProcess, lines = 30): string {
  return proc.child.output().split('\n')
    .filter((line) => /"level":"(error|warn|ERROR)"/.test(line) && !/"logger":"kafkajs"/.test(line))
    .slice(-lines).map((line) => line.slice(0, 600)).join('\n');
}
