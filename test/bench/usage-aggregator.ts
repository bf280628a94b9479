/**
 * Usage aggregator benchmark:
 * `npx tsx test/bench/usage-aggregator.ts [events] [--batch=N] [--consumers=N]`.
 *
 * The production path end to end: outcome events published on the embedded
 * bus (durable log in a temp SQLite file), the real usage aggregator
 * (subscribeBatch, batches by size and time, commit after the write) and the
 * real ClickHouse adapter writing into the local server (CLICKHOUSE_URL,
 * default http://127.0.0.1:8123) in a fresh database, dropped at the end.
 *
 * The events are published first, then the aggregator drains the backlog:
 * that is the rate it sustains when it falls behind (after a ClickHouse
 * outage, a deploy), which is the figure that matters for a consumer.
 * Prints events/s over the whole drain and per second, batch sizes and
 * where a batch's time goes; exits 1 below 50,000 events/s or when
 * ClickHouse holds anything but exactly one row per event.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os, { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { createClient } from '@clickhouse/client';
import { openEmbeddedDb } from '../../core/adapters/embedded-db.ts';
import { createLocalBus } from '../../core/adapters/bus/local.ts';
import { createClickHouseAnalytics } from '../../core/adapters/analytics/clickhouse.ts';
import { sqlIdentifier } from '../../core/adapters/analytics/clickhouse-sql.ts';
import { createMetrics } from '../../core/metrics.ts';
import { TOPICS } from '../../core/ports/bus.ts';
import type { Analytics, OutcomeEvent } from '../../core/ports/analytics.ts';
import { startUsageAggregator } from '../../pipelines/usage-aggregator.ts';

const args = process.argv.slice(2);
const flag = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const TOTAL = Number(args.find((a) => /^\d+$/.test(a)) ?? 300_000);
/** the aggregator's defaults unless given: `--batch=20000 --consumers=2` */
const MAX_BATCH = flag('batch') === undefined ? undefined : Number(flag('batch'));
const CONSUMERS = flag('consumers') === undefined ? undefined : Number(flag('consumers'));
const TARGET = 50_000;
const ACCOUNTS = 1000;
const PUBLISH_CHUNK = 10_000;
const URL = process.env.CLICKHOUSE_URL ?? 'http://127.0.0.1:8123';
const USER = process.env.CLICKHOUSE_USER ?? 'default';
const PASSWORD = process.env.CLICKHOUSE_PASSWORD ?? '';

const ROUTES = ['tts', 'tts', 'tts', 'audio_speech', 'audio_speech', 'tts_stream', 'dialogue', 'srt', 'voices_create'];
const VOICES: Array<[string, string]> = [
  ['vi-central-male-hung', 'Hùng'], ['vi-north-female-mai', 'Mai'], ['vi-south-female-lan', 'Lan'],
  ['vi-north-male-nam', 'Nam'], ['vi-central-female-thu', 'Thu'],
];

/** A deterministic, realistic mix: mostly ok, a share of queued /tts jobs, cache hits, 4xx refusals and errors. */
function makeEvent(i: number, startMs: number): OutcomeEvent {
  const account = `acct_${(i * 7919) % ACCOUNTS}`;
  const route = ROUTES[i % ROUTES.length]!;
  const [voice, voiceName] = VOICES[i % VOICES.length]!;
  const r = i % 20;
  const base: OutcomeEvent = {
    id: `out_bench_${i}`, at: new Date(startMs + i * 3).toISOString(), requestId: `req_bench_${i}`,
    accountId: account, keyId: `${account}_key_${i % 3}`, grantId: `${account}_grant`, route, status: 200, result: 'ok',
    tokensCharged: 195 + (i % 50), tokensRefunded: 0, characters: 50 + (i % 400), audioSeconds: 2.5 + (i % 7) / 4,
    genMs: 80 + (i % 300), voice, voiceName, engine: 'v4', errorCode: null, cacheHit: false, queued: false, jobId: null,
  };
  if (route === 'tts' && r < 12) {
    return { ...base, status: 201, result: 'queued', queued: true, jobId: `job_bench_${i}`, audioSeconds: 0, genMs: null };
  }
  if (r === 12) return { ...base, result: 'cache_hit', cacheHit: true, genMs: null };
  if (r === 13 || r === 14) {
    return { ...base, status: r === 13 ? 400 : 429, result: 'denied', errorCode: `http_${r === 13 ? 400 : 429}`, tokensCharged: 0, characters: 0, audioSeconds: 0, genMs: null };
  }
  if (r === 15) return { ...base, status: 500, result: 'error', errorCode: 'synthesis_failed', tokensRefunded: base.tokensCharged, audioSeconds: 0 };
  return base;
}

/** CPU seconds used so far by local clickhouse-server processes (null when none is visible in /proc). */
function clickhouseCpuSeconds(): number | null {
  let total = 0;
  let found = false;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (!readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith('clickhouse')) continue;
      // Fields after the command name: utime and stime are the 12th and 13th, in clock ticks (100 per second).
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      total += (Number(fields[11]) + Number(fields[12])) / 100;
      found = true;
    } catch {
      // the process ended or is not ours to read
    }
  }
  return found ? total : null;
}

const median = (xs: number[]) => (xs.length === 0 ? 0 : [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'usage-agg-bench-'));
  const database = `bench_usage_agg_${process.pid}_${Date.now()}`;
  const admin = createClient({ url: URL, username: USER, password: PASSWORD });
  const db = openEmbeddedDb(dir, 'bench.db');
  // Retention above the backlog: the bus must keep every event until the aggregator commits it.
  const bus = createLocalBus(db, { retainPerPartition: TOTAL + 1 });
  let analytics: Analytics | undefined;
  let failed = false;
  try {
    const store = await createClickHouseAnalytics({ url: URL, database, user: USER, password: PASSWORD });
    analytics = store;

    const startMs = Date.now() - 3 * 86_400_000;
    const published = process.hrtime.bigint();
    for (let from = 0; from < TOTAL; from += PUBLISH_CHUNK) {
      const events = Array.from({ length: Math.min(PUBLISH_CHUNK, TOTAL - from) }, (_, k) => makeEvent(from + k, startMs));
      await bus.publish(TOPICS.outcomes, events.map((event) => ({ id: event.id, key: event.accountId!, value: event })));
    }
    const publishS = Number(process.hrtime.bigint() - published) / 1e9;
    console.log(`published ${fmt(TOTAL)} outcome events on the local bus in ${publishS.toFixed(2)} s (${fmt(TOTAL / publishS)}/s; not part of the figure)`);

    // Times the store's share of each batch; the rest of a batch's time is the bus (read, JSON.parse, commit).
    const batchSizes: number[] = [];
    let storeMs = 0;
    const timed: Analytics = {
      ...store,
      async recordOutcomes(events) {
        const t0 = performance.now();
        await store.recordOutcomes(events);
        storeMs += performance.now() - t0;
        batchSizes.push(events.length);
      },
    };

    const loadBefore = loadavg()[0]!;
    const cpuBefore = process.cpuUsage();
    const chBefore = clickhouseCpuSeconds();
    const started = performance.now();
    const perSecond: number[] = [];
    let lastDone = 0;
    let lastAt = started;
    const aggregator = await startUsageAggregator({ bus, analytics: timed, metrics: createMetrics(false), maxBatch: MAX_BATCH, consumers: CONSUMERS });
    for (;;) {
      await new Promise((r) => setTimeout(r, 250));
      const done = TOTAL - (await bus.lag(TOPICS.outcomes, 'usage-aggregator'));
      const now = performance.now();
      if (now - lastAt >= 1000 || done === TOTAL) {
        if (now - lastAt >= 500) perSecond.push(((done - lastDone) * 1000) / (now - lastAt));
        lastDone = done;
        lastAt = now;
      }
      if (done === TOTAL) break;
    }
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const nodeCpu = (cpu.user + cpu.system) / 1e6;
    const chAfter = clickhouseCpuSeconds();
    await aggregator.stop();

    const table = `${sqlIdentifier(database)}.${sqlIdentifier('usage_events')}`;
    const counted = await (await admin.query({ query: `SELECT count() AS rows, uniqExact(id) AS ids FROM ${table} FINAL`, format: 'JSONEachRow' })).json<{ rows: string; ids: string }>();
    const rows = Number(counted[0]!.rows);
    const ids = Number(counted[0]!.ids);

    const rate = TOTAL / seconds;
    const sizes = [...batchSizes].sort((a, b) => a - b);
    console.log(`usage aggregator: ${fmt(TOTAL)} events into ClickHouse in ${seconds.toFixed(2)} s`);
    console.log(`  events/s (whole drain): ${fmt(rate)}   ratio to target ${TARGET.toLocaleString('en-US')}/s: ${(rate / TARGET).toFixed(2)}`);
    console.log(`  events/s per second: median ${fmt(median(perSecond))}, min ${fmt(Math.min(...perSecond))}, max ${fmt(Math.max(...perSecond))} (${perSecond.length} samples)`);
    console.log(`  batches: ${batchSizes.length}, size median ${median(sizes)}, min ${sizes[0]}, max ${sizes[sizes.length - 1]}`);
    console.log(`  time in the ClickHouse adapter: ${(storeMs / 1000).toFixed(2)} s (${((storeMs / 10 / seconds)).toFixed(0)}% of the drain); bus read/parse/commit and waits: the rest`);
    const chCpu = chBefore === null || chAfter === null ? 'not visible' : `${(chAfter - chBefore).toFixed(2)} s (${((100 * (chAfter - chBefore)) / seconds).toFixed(0)}% of a core)`;
    console.log(`  CPU during the drain: this process ${nodeCpu.toFixed(2)} s (${((100 * nodeCpu) / seconds).toFixed(0)}% of a core, ${((nodeCpu * 1e6) / TOTAL).toFixed(1)} µs/event), clickhouse-server ${chCpu}`);
    console.log(`  machine: ${os.cpus().length} cores, load average ${loadBefore.toFixed(2)} before, ${loadavg()[0]!.toFixed(2)} after`);
    console.log(`  ClickHouse check: ${fmt(rows)} rows after FINAL, ${fmt(ids)} distinct ids (expected ${fmt(TOTAL)})`);
    if (rows !== TOTAL || ids !== TOTAL) {
      console.error('FAIL: ClickHouse does not hold exactly one row per event');
      failed = true;
    }
    if (rate < TARGET) {
      console.error(`FAIL: ${fmt(rate)} events/s is below the target of ${fmt(TARGET)}`);
      failed = true;
    }
  } finally {
    await analytics?.close();
    await bus.close();
    db.close();
    await admin.command({ query: `DROP DATABASE IF EXISTS ${sqlIdentifier(database)}` });
    await admin.close();
    rmSync(dir, { recursive: true, force: true });
  }
  process.exitCode = failed ? 1 : 0;
}

await main();
