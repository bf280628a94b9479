import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startKafka } from '../helpers/servers/kafka.ts';
import { startMongo } from '../helpers/servers/mongo.ts';
import { LOAD_GENERATOR_ENV, spawnServer, load, median, fmt, type LoadResult } from './lib.ts';

/**
 * The production path against the embedded defaults, side by side in one
 * run: an API process (ROLES=api) on the embedded defaults, on Kafka +
 * MongoDB, and on Kafka + MongoDB + Redis, each measured on authenticated
 * `GET /balance` (100 connections) and the `POST /tts` accept path (unique
 * texts, 50 connections). Rounds interleave the three set-ups so load on the
 * machine hits them alike; each figure is the median of the rounds.
 * Target: the accept rate on Kafka + MongoDB is at least 40% of its own
 * `GET /balance`; exits 1 on a miss.
 *
 * Servers: KAFKA_BROKERS, MONGODB_URL and REDIS_URL when set, otherwise the
 * test broker and MongoDB-wire server `npm test` uses, and Redis on
 * 127.0.0.1:6379. `BENCH_ROUNDS` (default 3), `BENCH_SECONDS` (default 8).
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const TARGET = 0.4;
const ADMIN = 'bench-admin-token-0123456789';

// Each set-up names its adapters itself; nothing is inherited.
const given = { kafka: process.env.KAFKA_BROKERS, mongo: process.env.MONGODB_URL, redis: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' };
for (const name of ['KAFKA_BROKERS', 'MONGODB_URL', 'CLICKHOUSE_URL', 'REDIS_URL']) delete process.env[name];

interface Setup {
  label: string;
  env: Record<string, string>;
  url?: string;
  apiKey?: string;
  stop?: () => Promise<void>;
  balance: LoadResult[];
  tts: LoadResult[];
}

function summary(runs: LoadResult[]): LoadResult {
  return {
    rps: median(runs.map((x) => x.rps)), p50: median(runs.map((x) => x.p50)), p99: median(runs.map((x) => x.p99)),
    non2xx: runs.reduce((s, x) => s + x.non2xx, 0), errors: runs.reduce((s, x) => s + x.errors, 0),
  };
}

const started: Array<() => Promise<unknown>> = [];
const dataDirs: string[] = [];
let missed = false;
try {
  const kafka = given.kafka ? null : await startKafka({ bench: true });
  if (kafka) started.push(kafka.stop);
  const mongo = given.mongo ? null : await startMongo({ bench: true });
  if (mongo) started.push(mongo.stop);
  const brokers = given.kafka ?? kafka!.brokers;
  const mongoUrl = given.mongo ?? mongo!.url;
  console.log(`production path benchmark: ${ROUNDS} rounds of ${SECONDS} s per figure; ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(2)}`);
  console.log(`  Kafka ${kafka ? `${kafka.version} (test broker)` : ''} at ${brokers}; MongoDB ${mongo ? mongo.version : ''} at ${mongoUrl}; Redis at ${given.redis}`);

  const run = Date.now();
  const production = { KAFKA_BROKERS: brokers, MONGODB_URL: mongoUrl, MONGODB_DB: `bench_${run}` };
  const setups: Setup[] = [
    { label: 'embedded defaults', env: {}, balance: [], tts: [] },
    { label: 'Kafka + MongoDB', env: { ...production, MONGODB_DB: `bench_km_${run}` }, balance: [], tts: [] },
    { label: 'Kafka + MongoDB + Redis', env: { ...production, MONGODB_DB: `bench_kmr_${run}`, REDIS_URL: given.redis }, balance: [], tts: [] },
  ];
  for (const setup of setups) {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'vieneu-bench-'));
    dataDirs.push(dataDir);
    const server = await spawnServer('core/main.ts', {
      DATA_DIR: dataDir, PORT: '0', OPS_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ADMIN_TOKEN: ADMIN, ROLES: 'api',
      ...LOAD_GENERATOR_ENV,
      ...setup.env,
    });
    started.push(server.stop);
    const boot = await fetch(`${server.url}/admin/v1/bootstrap`, {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench', grant: { totalTokens: 2_000_000_000 } }),
    });
    if (boot.status !== 201) throw new Error(`${setup.label}: bootstrap answered ${boot.status}: ${await boot.text()}`);
    setup.url = server.url;
    setup.apiKey = ((await boot.json()) as { apiKey: string }).apiKey;
  }

  let seq = 0;
  const balance = (s: Setup, duration = SECONDS) => load({ url: `${s.url}/api/v1/balance`, connections: 100, duration, headers: { authorization: `Bearer ${s.apiKey}` } });
  const accept = (s: Setup, duration = SECONDS) => load({
    url: `${s.url}/api/v1/tts`, connections: 50, duration, method: 'POST',
    headers: { authorization: `Bearer ${s.apiKey}`, 'content-type': 'application/json' },
    requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify({ text: `Xin chào, đây là yêu cầu số ${++seq} của bài đo đường sản xuất.` }) }) }],
  });
  for (const s of setups) {
    await balance(s, 2);
    await accept(s, 2);
  }
  for (let round = 1; round <= ROUNDS; round++) {
    for (const s of setups) {
      s.balance.push(await balance(s));
      s.tts.push(await accept(s));
    }
    console.log(`  round ${round}: ${setups.map((s) => `${s.label} balance ${s.balance.at(-1)!.rps.toFixed(0)}, tts ${s.tts.at(-1)!.rps.toFixed(0)}`).join('; ')}`);
  }

  const base = setups[0]!;
  const baseBalance = summary(base.balance).rps;
  const baseTts = summary(base.tts).rps;
  console.log(`\n${'set-up'.padEnd(26)}${'GET /balance'.padEnd(58)}${'POST /tts (accept)'.padEnd(58)}tts / balance`);
  for (const s of setups) {
    const bal = summary(s.balance);
    const tts = summary(s.tts);
    const vs = s === base ? '' : ` (${(bal.rps / baseBalance).toFixed(2)} / ${(tts.rps / baseTts).toFixed(2)} of embedded)`;
    console.log(`${s.label.padEnd(26)}${fmt(bal).padEnd(58)}${fmt(tts).padEnd(58)}${(tts.rps / bal.rps).toFixed(2)}${vs}`);
    if (bal.non2xx + bal.errors + tts.non2xx + tts.errors > 0) {
      console.error(`FAIL: ${s.label} answered non-2xx or failed requests`);
      missed = true;
    }
  }
  const km = setups[1]!;
  const ratio = summary(km.tts).rps / summary(km.balance).rps;
  console.log(`\nKafka + MongoDB: tts accept / balance = ${ratio.toFixed(2)}  (target >= ${TARGET.toFixed(2)}) ${ratio >= TARGET ? 'PASS' : 'MISS'}`);
  if (ratio < TARGET) missed = true;
} finally {
  await Promise.allSettled(started.reverse().map((stop) => stop()));
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
}
process.exitCode = missed ? 1 : 0;
