import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnServer } from './lib.ts';
import { startKafka } from '../helpers/servers/kafka.ts';
import { startMongo } from '../helpers/servers/mongo.ts';

/**
 * Issue 15, the soak: mixed traffic at 80% of the capacity measured just
 * before, for SOAK_MINUTES (default 10) on the embedded defaults, then the
 * same against Kafka + MongoDB (the servers `npm test` uses, started here).
 * Targets, per stack: error rate 0, p99 of the last minute within 20% of the
 * first minute's, server RSS flat (last minute's mean under 10% above the
 * first's), and the ledger reconciling with every grant at the end.
 *
 * `npx tsx test/bench/soak.ts` (SOAK_MINUTES=1 for a quick look;
 * SOAK_STACKS=embedded or kafka-mongo for one stack).
 */
const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
const STACKS = (process.env.SOAK_STACKS ?? 'embedded,kafka-mongo').split(',');
const ADMIN = 'soak-admin-token-0123456789';
const CAPACITY_SECONDS = 30;
const LOAD_SHARE = 0.8;

type Kind = 'balance' | 'tts' | 'poll' | 'speech' | 'stream' | 'usage';
/** The mix, by weight: mostly cheap reads and job submissions, some synthesis in the request. */
const MIX: Array<[Kind, number]> = [['balance', 35], ['tts', 25], ['poll', 15], ['speech', 10], ['stream', 10], ['usage', 5]];
const WEIGHT = MIX.reduce((s, [, w]) => s + w, 0);

interface Sample { at: number; ms: number; ok: boolean; kind: Kind; status: number }

function pick(i: number): Kind {
  let r = (i * 7919) % WEIGHT;
  for (const [kind, weight] of MIX) {
    if (r < weight) return kind;
    r -= weight;
  }
  return 'balance';
}

const sentence = (n: number) => `Xin chào, đây là yêu cầu số ${n} của bài chạy dài, đọc một câu ngắn bằng giọng miền Bắc.`;

async function one(base: string, key: string, kind: Kind, n: number, jobs: string[]): Promise<number> {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  let res: Response;
  switch (kind) {
    case 'balance':
      res = await fetch(`${base}/api/v1/balance`, { headers });
      break;
    case 'usage':
      res = await fetch(`${base}/api/v1/usage?scope=account`, { headers });
      break;
    case 'poll': {
      const id = jobs[n % Math.max(1, jobs.length)];
      res = id ? await fetch(`${base}/api/v1/tts/${id}`, { headers }) : await fetch(`${base}/api/v1/balance`, { headers });
      break;
    }
    case 'tts': {
      res = await fetch(`${base}/api/v1/tts`, { method: 'POST', headers, body: JSON.stringify({ text: sentence(n) }) });
      if (res.status === 201) {
        const body = (await res.json()) as { jobId: string };
        if (jobs.length < 5000) jobs.push(body.jobId);
        return res.status;
      }
      break;
    }
    case 'speech':
      res = await fetch(`${base}/api/v1/audio/speech`, { method: 'POST', headers, body: JSON.stringify({ input: sentence(n), response_format: 'pcm', sample_rate: 16000 }) });
      break;
    case 'stream':
      res = await fetch(`${base}/api/v1/tts/stream`, { method: 'POST', headers, body: JSON.stringify({ text: sentence(n), outputFormat: 'pcm', sampleRate: 16000 }) });
      break;
  }
  await res.arrayBuffer();
  return res.status;
}

function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) * 1024;
}

function p99(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * 0.99))] ?? 0;
}

/** Closed loop with many workers for a while: the most requests per second this mix reaches. */
async function capacity(base: string, key: string, jobs: string[]): Promise<number> {
  const end = Date.now() + CAPACITY_SECONDS * 1000;
  let done = 0;
  let n = 0;
  await Promise.all(Array.from({ length: 32 }, async () => {
    while (Date.now() < end) {
      await one(base, key, pick(n), n++, jobs).catch(() => 0);
      done++;
    }
  }));
  return done / CAPACITY_SECONDS;
}

/** Open loop at a fixed rate: requests start on schedule whatever the answers take. */
async function soak(base: string, key: string, rate: number, pid: number, jobs: string[]): Promise<{ samples: Sample[]; rss: Array<[number, number]> }> {
  const samples: Sample[] = [];
  const rss: Array<[number, number]> = [];
  const started = Date.now();
  const end = started + MINUTES * 60_000;
  const pending = new Set<Promise<void>>();
  const sampler = setInterval(() => rss.push([Date.now() - started, rssOf(pid)]), 5000);
  let n = 1_000_000;
  const interval = 1000 / rate;
  let next = Date.now();
  while (Date.now() < end) {
    const now = Date.now();
    if (now < next) await new Promise((r) => setTimeout(r, Math.min(next - now, 50)));
    if (Date.now() < next) continue;
    next += interval;
    const i = n++;
    const kind = pick(i);
    const t0 = performance.now();
    const p = one(base, key, kind, i, jobs)
      .then((status) => { samples.push({ at: Date.now() - started, ms: performance.now() - t0, ok: status >= 200 && status < 300, kind, status }); })
      .catch(() => { samples.push({ at: Date.now() - started, ms: performance.now() - t0, ok: false, kind, status: 0 }); })
      .finally(() => pending.delete(p));
    pending.add(p);
  }
  clearInterval(sampler);
  await Promise.all(pending);
  return { samples, rss };
}

async function run(stack: string): Promise<boolean> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vieneu-soak-'));
  const servers: Array<{ stop(): Promise<void> }> = [];
  const env: Record<string, string> = {
    DATA_DIR: dataDir, PORT: '0', OPS_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ADMIN_TOKEN: ADMIN,
    ACCOUNT_ROUTES_PER_MINUTE: '100000000', RATE_SPEECH_PER_MINUTE: '100000000', QUEUE_MAX_DEPTH: '100000000', USER_QUEUE_MAX: '100000000',
    STREAMS_PER_GRANT: '1000', STREAM_CAPACITY: '1000',
  };
  if (stack === 'kafka-mongo') {
    const [kafka, mongo] = await Promise.all([startKafka(), startMongo()]);
    servers.push(kafka, mongo);
    Object.assign(env, { KAFKA_BROKERS: kafka.brokers, MONGODB_URL: mongo.url });
    console.log(`  ${kafka.version}; ${mongo.version}`);
  }
  const server = await spawnServer('core/main.ts', env);
  try {
    const boot = await fetch(`${server.url}/admin/v1/bootstrap`, {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'soak', grant: { totalTokens: 2_000_000_000 } }),
    });
    const { apiKey, grantId } = (await boot.json()) as { apiKey: string; grantId: string };
    const jobs: string[] = [];
    const cap = await capacity(server.url, apiKey, jobs);
    const rate = Math.max(1, cap * LOAD_SHARE);
    console.log(`  capacity ${cap.toFixed(1)} req/s with this mix; soaking at ${rate.toFixed(1)} req/s for ${MINUTES} min`);
    const { samples, rss } = await soak(server.url, apiKey, rate, server.child.pid!, jobs);

    const errors = samples.filter((s) => !s.ok);
    const firstMinute = samples.filter((s) => s.at < 60_000).map((s) => s.ms);
    const lastMinute = samples.filter((s) => s.at >= (MINUTES - 1) * 60_000).map((s) => s.ms);
    const [p99First, p99Last] = [p99(firstMinute), p99(lastMinute)];
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    const rssFirst = mean(rss.filter(([t]) => t < 60_000).map(([, v]) => v));
    const rssLast = mean(rss.filter(([t]) => t >= (MINUTES - 1) * 60_000).map(([, v]) => v));
    const growth = rssLast / rssFirst - 1;

    // Let the pipelines settle, then reconcile the grant against its ledger.
    interface Reconciliation { balanced: boolean; usedTokens: number; ledgerCharged: number; ledgerRefunded: number }
    const readReconciliation = async () =>
      (await (await fetch(`${server.url}/admin/v1/grants/${grantId}/reconcile`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as Reconciliation;
    let reconcile = await readReconciliation();
    for (let i = 0; i < 60 && !reconcile.balanced; i++) {
      await new Promise((r) => setTimeout(r, 1000));
      reconcile = await readReconciliation();
    }

    const byKind = MIX.map(([kind]) => `${kind} ${samples.filter((s) => s.kind === kind).length}`).join(', ');
    console.log(`  requests ${samples.length} (${byKind}); errors ${errors.length}${errors.length ? ` (statuses ${[...new Set(errors.map((e) => e.status))].join(', ')})` : ''}`);
    console.log(`  p99 first minute ${p99First.toFixed(0)} ms, last minute ${p99Last.toFixed(0)} ms (${((p99Last / p99First - 1) * 100).toFixed(0)}%)`);
    console.log(`  RSS first minute ${(rssFirst / 2 ** 20).toFixed(0)} MB, last minute ${(rssLast / 2 ** 20).toFixed(0)} MB (${(growth * 100).toFixed(1)}%)`);
    console.log(`  ledger: used ${reconcile.usedTokens}, charged ${reconcile.ledgerCharged}, refunded ${reconcile.ledgerRefunded}, balanced ${reconcile.balanced}`);
    const checks: Array<[string, boolean]> = [
      ['error rate 0', errors.length === 0],
      ['p99 last minute within 20% of the first', p99Last <= p99First * 1.2],
      ['RSS growth under 10%', growth < 0.1],
      ['ledger reconciles', reconcile.balanced === true],
    ];
    for (const [name, ok] of checks) console.log(`  ${ok ? 'PASS' : 'MISS'} ${name}`);
    return checks.every(([, ok]) => ok);
  } finally {
    await server.stop();
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

let allOk = true;
for (const stack of STACKS) {
  console.log(`\nsoak on ${stack}:`);
  allOk = (await run(stack)) && allOk;
}
process.exitCode = allOk ? 0 : 1;
