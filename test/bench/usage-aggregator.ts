/**
 * Usage aggregator benchmark:
 * `npx tsx test/bench/usage-aggregator.ts [events per round] [--rounds=3] [--batch=N] [--consumers=N] [--null-store] [--bus=local|kafka]`.
 *
 * The production path end to end: outcome events published on the embedded
 * bus (durable log in a temp SQLite file), the real usage aggregator
 * (subscribeBatch, batches by size and time, commit after the write) and the
 * real ClickHouse adapter writing into the local server (CLICKHOUSE_URL,
 * default http://127.0.0.1:8123) in a fresh database, dropped at the end.
 *
 * Each round publishes the events first, then times the aggregator draining
 * that backlog: the rate it sustains when it has fallen behind (after a
 * ClickHouse outage, a deploy), which is the figure that matters for a
 * consumer. Prints every round's events/s over the whole drain (start-up
 * and tail included) and per second, the median over rounds and its ratio
 * to the target, batch sizes, the CPU the aggregator's process and
 * clickhouse-server used per event, and the CPU other processes took
 * meanwhile (the noise in that round). Every write goes through the daily
 * aggregates' materialized views as in production. Exits 1 when the median
 * is below 50,000 events/s, ClickHouse holds anything but exactly one row
 * per event, the aggregates do not count each event once, or an account's
 * report from the aggregates differs from the one from the raw rows.
 *
 * `--null-store` swaps ClickHouse for a store that only counts: the bus
 * read path alone, the ceiling any store can reach on this machine.
 *
 * `--bus=kafka` reads the events from Kafka instead (the production source:
 * KAFKA_BROKERS, else the test broker `npm test` uses, started here), with
 * the aggregator's Kafka consumers joining their group at the start of each
 * round; the figure then also says how fast it drains once it has joined.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createClient } from '@clickhouse/client';
import { openEmbeddedDb } from '../../core/adapters/embedded-db.ts';
import { createLocalBus } from '../../core/adapters/bus/local.ts';
import { createKafkaBus } from '../../core/adapters/bus/kafka.ts';
import { startKafka } from '../helpers/servers/kafka.ts';
import type { Bus } from '../../core/ports/bus.ts';
import { createClickHouseAnalytics } from '../../core/adapters/analytics/clickhouse.ts';
import { sqlIdentifier } from '../../core/adapters/analytics/clickhouse-sql.ts';
import { AGG_TABLES } from '../../core/adapters/analytics/clickhouse-aggregates.ts';
import { p95FromLevels, parseUsageRow, usagePlan, usageSql } from '../../core/adapters/analytics/clickhouse-usage.ts';
import { buildReport } from '../../core/adapters/analytics/report.ts';
import { isDeepStrictEqual } from 'node:util';
import { TOPICS } from '../../core/ports/bus.ts';
import type { Analytics, OutcomeEvent } from '../../core/ports/analytics.ts';
import { startUsageAggregator } from '../../pipelines/usage-aggregator/aggregator.ts';

const args = process.argv.slice(2);
const flag = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const numberFlag = (name: string) => (flag(name) === undefined ? undefined : Number(flag(name)));
const PER_ROUND = Number(args.find((a) => /^\d+$/.test(a)) ?? 300_000);
const ROUNDS = numberFlag('rounds') ?? 3;
/** the aggregator's own defaults unless given */
const MAX_BATCH = numberFlag('batch');
const CONSUMERS = numberFlag('consumers');
const NULL_STORE = args.includes('--null-store');
const BUS = flag('bus') ?? 'local';
const TARGET = 50_000;
const ACCOUNTS = 1000;
// Kafka takes a record batch of at most 1 MB per partition (message.max.bytes): smaller chunks there.
const PUBLISH_CHUNK = BUS === 'kafka' ? 2_000 : 10_000;
const GROUP = 'usage-aggregator';
const URL = process.env.CLICKHOUSE_URL ?? 'http://127.0.0.1:8123';
const USER = process.env.CLICKHOUSE_USER ?? 'default';
const PASSWORD = process.env.CLICKHOUSE_PASSWORD ?? '';

const ROUTES = ['tts', 'tts', 'tts', 'audio_speech', 'audio_speech', 'tts_stream', 'dialogue', 'srt', 'voices_create'];
const VOICES: Array<[string, string]> = [
  ['vi-central-male-hung', 'Hùng'], ['vi-north-female-mai', 'Mai'], ['vi-south-female-lan', 'Lan'],
  ['vi-north-male-nam', 'Nam'], ['vi-central-female-thu', 'Thu'],
];

/**
 * A realistic mix (ids shaped like the platform's): mostly ok, a fifth
 * queued /tts jobs (these also go to usage_jobs and look up closes),
 * cache hits, 4xx refusals and server errors.
 */
function makeEvent(i: number, startMs: number): OutcomeEvent {
  const account = `acct_${String((i * 7919) % ACCOUNTS).padStart(6, '0')}`;
  const route = ROUTES[i % ROUTES.length]!;
  const [voice, voiceName] = VOICES[i % VOICES.length]!;
  const r = i % 20;
  const base: OutcomeEvent = {
    id: `out_${randomUUID()}`, at: new Date(startMs + i * 3).toISOString(), requestId: `req_${randomUUID()}`,
    accountId: account, keyId: `key_${account}_${i % 3}`, grantId: `grant_${account}`, route, status: 200, result: 'ok',
    tokensCharged: 195 + (i % 50), tokensRefunded: 0, characters: 50 + (i % 400), audioSeconds: 2.5 + (i % 7) / 4,
    genMs: 80 + (i % 300), voice, voiceName, engine: 'v4', errorCode: null, cacheHit: false, queued: false, jobId: null,
  };
  if (route === 'tts' && r < 12) {
    return { ...base, status: 201, result: 'queued', queued: true, jobId: `job_${randomUUID()}`, audioSeconds: 0, genMs: null };
  }
  if (r === 12) return { ...base, result: 'cache_hit', cacheHit: true, genMs: null };
  if (r === 13 || r === 14) {
    const status = r === 13 ? 400 : 429;
    return { ...base, status, result: 'denied', errorCode: `http_${status}`, tokensCharged: 0, characters: 0, audioSeconds: 0, genMs: null };
  }
  if (r === 15) return { ...base, status: 500, result: 'error', errorCode: 'synthesis_failed', tokensRefunded: base.tokensCharged, audioSeconds: 0 };
  return base;
}

/** CPU seconds a process has used so far, from /proc (null when it cannot be read). */
function processCpuSeconds(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

/** CPU seconds used so far by local clickhouse-server processes (null when none is visible in /proc). */
function clickhouseCpuSeconds(): number | null {
  let total = 0;
  let found = false;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (!readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith('clickhouse')) continue;
      // After the command name, utime and stime are the 12th and 13th fields, in clock ticks (100 a second).
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      total += (Number(fields[11]) + Number(fields[12])) / 100;
      found = true;
    } catch {
      // the process ended, or is not ours to read
    }
  }
  return found ? total : null;
}

/** CPU seconds the whole machine has been busy (all processes, all cores), from /proc/stat. */
function machineBusySeconds(): number | null {
  try {
    const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).map(Number);
    // user nice system idle iowait irq softirq steal: busy is all but idle and iowait.
    const busy = ticks[0]! + ticks[1]! + ticks[2]! + ticks[5]! + ticks[6]! + ticks[7]!;
    return busy / 100;
  } catch {
    return null;
  }
}

const median = (xs: number[]) => (xs.length === 0 ? 0 : [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

/** CPU of everything else on the machine during a round, as a share of a core: the noise in that round's figure. */
function others(round: Round): string {
  if (round.machineCpu === null) return 'not visible';
  const rest = Math.max(0, round.machineCpu - round.nodeCpu - (round.chCpu ?? 0) - (round.brokerCpu ?? 0));
  return `${((100 * rest) / round.seconds).toFixed(0)}% of a core`;
}

interface Round {
  /** over the whole drain, start-up included */
  rate: number;
  /** from the first batch handed to the aggregator (Kafka: once its consumers joined their group) */
  drainRate: number;
  seconds: number;
  nodeCpu: number;
  chCpu: number | null;
  /** the test Kafka broker's CPU seconds (null: the local bus, or a broker of your own) */
  brokerCpu: number | null;
  perSecond: number[];
  batches: number[];
  /** share of the drain the main thread was busy (the rest it waited on ClickHouse or the batch timer) */
  elu: number;
  /** CPU seconds the whole machine used meanwhile: what is not ours or the server's is other work competing */
  machineCpu: number | null;
}

/** Where the events come from: the embedded log in a temp SQLite file, or Kafka. */
async function openSource(dir: string): Promise<{ bus: Bus; name: string; brokerPid?: () => number | undefined; close(): Promise<void> }> {
  if (BUS === 'kafka') {
    const own = process.env.KAFKA_BROKERS ? null : await startKafka({ bench: true });
    const brokers = process.env.KAFKA_BROKERS ?? own!.brokers;
    const bus = await createKafkaBus({ brokers: brokers.split(','), clientId: 'usage-aggregator-bench', partitions: 6 });
    return {
      bus,
      name: `Kafka at ${brokers}${own ? ` (test broker, Apache Kafka ${own.version})` : ''}, 6 partitions`,
      brokerPid: own?.pid,
      close: async () => {
        await bus.close();
        await own?.stop();
      },
    };
  }
  if (BUS !== 'local') throw new Error(`--bus must be local or kafka, not ${BUS}`);
  const db = openEmbeddedDb(dir, 'bench.db');
  // Retention above a round's backlog: the bus must keep every event until the aggregator commits it.
  const bus = createLocalBus(db, { retainPerPartition: PER_ROUND + 1 });
  return {
    bus,
    name: 'the embedded bus',
    close: async () => {
      await bus.close();
      db.close();
    },
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'usage-agg-bench-'));
  const database = `bench_usage_agg_${process.pid}_${Date.now()}`;
  const admin = createClient({ url: URL, username: USER, password: PASSWORD });
  const source = await openSource(dir);
  const bus = source.bus;
  let store: Analytics | undefined;
  let failed = false;
  try {
    store = NULL_STORE ? undefined : await createClickHouseAnalytics({ url: URL, database, user: USER, password: PASSWORD });
    const batchSizes: number[] = [];
    let firstBatchAt: number | null = null;
    const sink: Analytics = {
      async recordOutcomes(events) {
        firstBatchAt ??= performance.now();
        if (store) await store.recordOutcomes(events);
        batchSizes.push(events.length);
      },
      recordJobCloses: async (events) => store?.recordJobCloses(events),
      usage: async (query) => store!.usage(query),
      ping: async () => store?.ping(),
      close: async () => store?.close(),
    };
    console.log(`usage aggregator benchmark: ${ROUNDS} rounds of ${fmt(PER_ROUND)} outcome events from ${source.name}, ${NULL_STORE ? 'NULL store (bus path only)' : `ClickHouse at ${URL}`}, ` +
      `batch ${MAX_BATCH ?? 'default'}, consumers ${CONSUMERS ?? 'default'}; ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(2)}`);

    const rounds: Round[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const startMs = Date.now() - 3 * 86_400_000 + round * 3_600_000;
      const publishStart = performance.now();
      for (let from = 0; from < PER_ROUND; from += PUBLISH_CHUNK) {
        const events = Array.from({ length: Math.min(PUBLISH_CHUNK, PER_ROUND - from) }, (_, k) => makeEvent(from + k, startMs));
        await bus.publish(TOPICS.outcomes, events.map((event) => ({ id: event.id, key: event.accountId!, value: event })));
      }
      const publishS = (performance.now() - publishStart) / 1000;

      batchSizes.length = 0;
      const cpuBefore = process.cpuUsage();
      const eluBefore = performance.eventLoopUtilization();
      const chBefore = clickhouseCpuSeconds();
      const brokerBefore = processCpuSeconds(source.brokerPid?.());
      const machineBefore = machineBusySeconds();
      const started = performance.now();
      const perSecond: number[] = [];
      let lastDone = 0;
      let lastAt = started;
      firstBatchAt = null;
      const aggregator = await startUsageAggregator({ bus, analytics: sink, maxBatch: MAX_BATCH, consumers: CONSUMERS });
      for (;;) {
        await new Promise((r) => setTimeout(r, 100));
        const done = PER_ROUND - (await bus.lag(TOPICS.outcomes, GROUP));
        const now = performance.now();
        if (now - lastAt >= 1000) {
          perSecond.push(((done - lastDone) * 1000) / (now - lastAt));
          lastDone = done;
          lastAt = now;
        }
        if (done === PER_ROUND) break;
      }
      const seconds = (performance.now() - started) / 1000;
      const cpu = process.cpuUsage(cpuBefore);
      const elu = performance.eventLoopUtilization(eluBefore).utilization;
      const chAfter = clickhouseCpuSeconds();
      const brokerAfter = processCpuSeconds(source.brokerPid?.());
      const machineAfter = machineBusySeconds();
      await aggregator.stop();
      const result: Round = {
        rate: PER_ROUND / seconds, seconds, drainRate: PER_ROUND / ((performance.now() - (firstBatchAt ?? started)) / 1000), nodeCpu: (cpu.user + cpu.system) / 1e6,
        chCpu: chBefore === null || chAfter === null ? null : chAfter - chBefore,
        brokerCpu: brokerBefore === null || brokerAfter === null ? null : brokerAfter - brokerBefore, perSecond, batches: [...batchSizes], elu,
        machineCpu: machineBefore === null || machineAfter === null ? null : machineAfter - machineBefore,
      };
      rounds.push(result);
      const ch = result.chCpu === null ? 'not visible' : `${((result.chCpu * 1e6) / PER_ROUND).toFixed(1)} µs/event (${((100 * result.chCpu) / seconds).toFixed(0)}% of a core)`;
      console.log(`  round ${round}: ${fmt(result.rate)} events/s (${seconds.toFixed(2)} s${BUS === 'kafka' ? `; ${fmt(result.drainRate)}/s from the first batch, after ${((firstBatchAt! - started) / 1000).toFixed(1)} s joining the group` : ''}; per second ${perSecond.map(fmt).join(' / ') || '-'}); ` +
        `${result.batches.length} batches, median ${median(result.batches)}; ` +
        `CPU: aggregator process ${((result.nodeCpu * 1e6) / PER_ROUND).toFixed(1)} µs/event (${((100 * result.nodeCpu) / seconds).toFixed(0)}% of a core, main thread busy ${(100 * elu).toFixed(0)}%), ` +
        `clickhouse-server ${ch}; ${result.brokerCpu === null ? '' : `Kafka broker ${((result.brokerCpu * 1e6) / PER_ROUND).toFixed(1)} µs/event (${((100 * result.brokerCpu) / seconds).toFixed(0)}% of a core); `}other processes ${others(result)}; published at ${fmt(PER_ROUND / publishS)}/s beforehand`);
    }

    // From Kafka, the group join at each start is no measure of throughput: the target applies from the first batch on.
    const judged = (r: Round) => (BUS === 'kafka' ? r.drainRate : r.rate);
    const rate = median(rounds.map(judged));
    if (BUS === 'kafka') console.log(`usage aggregator from Kafka: median ${fmt(median(rounds.map((r) => r.rate)))} events/s with the group join, ${fmt(rate)} events/s from the first batch (judged)`);
    console.log(`usage aggregator: median ${fmt(rate)} events/s over ${ROUNDS} rounds (min ${fmt(Math.min(...rounds.map(judged)))}, max ${fmt(Math.max(...rounds.map(judged)))}); ` +
      `ratio to the ${fmt(TARGET)}/s target: ${(rate / TARGET).toFixed(2)}; load average now ${os.loadavg()[0]!.toFixed(2)}`);

    if (!NULL_STORE) {
      const table = `${sqlIdentifier(database)}.${sqlIdentifier('usage_events')}`;
      const counted = await (await admin.query({ query: `SELECT count() AS rows, uniqExact(id) AS ids FROM ${table} FINAL`, format: 'JSONEachRow' })).json<{ rows: string; ids: string }>();
      const expected = PER_ROUND * ROUNDS;
      const rows = Number(counted[0]!.rows);
      const ids = Number(counted[0]!.ids);
      console.log(`  ClickHouse check: ${fmt(rows)} rows after FINAL, ${fmt(ids)} distinct ids (expected ${fmt(expected)})`);
      if (rows !== expected || ids !== expected) {
        console.error('FAIL: ClickHouse does not hold exactly one row per event');
        failed = true;
      }
      // The daily aggregates the views built meanwhile: every event once, and the same report as the raw rows give.
      const q = (name: string) => `${sqlIdentifier(database)}.${sqlIdentifier(name)}`;
      const aggregated = await (await admin.query({
        query: `SELECT (SELECT sumMerge(m_requests) FROM ${q(AGG_TABLES.routes)})
          - (SELECT sum(sign * toInt64(copies - 1)) FROM ${q(AGG_TABLES.fixes)} FINAL) AS n`,
        format: 'JSONEachRow',
      })).json<{ n: string }>();
      const account = makeEvent(0, 0).accountId!;
      const query = { scope: 'account' as const, accountId: account, keyId: null, from: new Date(Date.now() - 5 * 86_400_000), to: new Date() };
      const plan = usagePlan(query.from.getTime(), query.to.getTime(), false)!;
      const rawRows = (await (await admin.query({ query: usageSql(database, query, plan), format: 'JSONEachRow' })).json<Record<string, unknown>>()).map(parseUsageRow);
      const rawTotal = rawRows.find((row) => row.kind === 't');
      const same = isDeepStrictEqual(await store!.usage(query), buildReport(rawRows, rawTotal ? p95FromLevels(rawTotal.genCount, rawTotal.genAtLevels) : null));
      console.log(`  aggregates check: ${fmt(Number(aggregated[0]!.n))} requests in the daily aggregates (expected ${fmt(expected)}); ` +
        `usage() of ${account} ${same ? 'equals' : 'DIFFERS FROM'} the report from the raw rows`);
      if (Number(aggregated[0]!.n) !== expected || !same) {
        console.error('FAIL: the daily aggregates do not count every event exactly once');
        failed = true;
      }
      if (rate < TARGET) {
        console.error(`FAIL: median ${fmt(rate)} events/s is below the target of ${fmt(TARGET)}`);
        failed = true;
      }
    }
  } finally {
    await store?.close();
    await source.close();
    await admin.command({ query: `DROP DATABASE IF EXISTS ${sqlIdentifier(database)}` });
    await admin.close();
    rmSync(dir, { recursive: true, force: true });
  }
  process.exitCode = failed ? 1 : 0;
}

await main();
