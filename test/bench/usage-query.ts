/**
 * GET /usage benchmark:
 * `npx tsx test/bench/usage-query.ts [rows] [--runs=15] [--top-share=0.8] [--skew=3]`.
 *
 * Loads `rows` (default 5,000,000) usage rows into the raw tables of a fresh
 * database on the local ClickHouse (CLICKHOUSE_URL, default
 * http://127.0.0.1:8123), generated server-side with INSERT ... SELECT FROM
 * numbers() in SQL that 18.16 accepts: one account owns `--top-share` of all
 * rows (default 80%), the other 999 share the rest unevenly (floor(999 x
 * u^skew): with skew 3 the top 1% hold about a fifth of it), 2 to 4 keys
 * each, 92 days, the logical routes, 40 voices, every result and error
 * code. One row in twenty is a second version of its neighbour, as
 * production holds them until merges collapse them: the closed version of a
 * queued `tts` row (its queued row is in usage_jobs, its close in
 * usage_job_closes), or a redelivered duplicate of any other; 1% of `tts`
 * jobs are still open. Then builds the daily aggregates from those raw
 * tables, as a deployment upgrading to them does at start-up (the backfill),
 * and prints how long that took.
 *
 * Then times `usage({ scope: 'account', 30 days })` through the ClickHouse
 * adapter and `GET /usage?scope=account` over HTTP through the real platform
 * (the generated accounts timed belong to platform accounts made for the
 * run), for a typical account (the median by rows), a heavy one (the top 1%)
 * and the heaviest (the top-share account): median, p95, min and max of
 * `--runs` runs after two warm-ups, and, as the baseline, the same report
 * read from the raw rows alone (FINAL over the whole window, as before the
 * aggregates). Each report is checked twice: field by field against that
 * raw-row report (integer figures exactly, fractional sums to 1e-9), and
 * against an independent exact count of the account's distinct events.
 * Exits 1 when any account's median is over 300 ms or a report is wrong.
 * Drops the database.
 */
import { ClickHouseLogLevel, createClient } from '@clickhouse/client';
import os from 'node:os';
import { CLOSE_ROW_TYPES, EVENT_ROW_COLUMNS, TABLES } from '../../core/adapters/analytics/clickhouse-schema.ts';
import { sqlIdentifier, sqlNumber, sqlString, sqlStringList } from '../../core/adapters/analytics/clickhouse-sql.ts';
import { rebuildAggregates } from '../../core/adapters/analytics/clickhouse-backfill.ts';
import { p95FromLevels, parseUsageRow, usagePlan, usageSql } from '../../core/adapters/analytics/clickhouse-usage.ts';
import { buildReport } from '../../core/adapters/analytics/report.ts';
import type { Analytics, UsageQuery, UsageReport } from '../../core/ports/analytics.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { coreServices } from '../../core/services.ts';

const args = process.argv.slice(2);
const flag = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const ROWS = Number(args.find((a) => /^\d+$/.test(a)) ?? 5_000_000);
const RUNS = Math.max(15, Number(flag('runs') ?? 15));
/** share of all rows owned by the heaviest account (the pathological case the aggregates are for); 0 for none */
const TOP_SHARE = Number(flag('top-share') ?? 0.8);
/** exponent k of the other accounts' skew floor(999 x u^k) */
const SKEW = Number(flag('skew') ?? 3);
const TARGET_MS = 300;
const BASELINE_RUNS = 5;
const ACCOUNTS = 1000;
const DAYS = 92;
const WINDOW_DAYS = 30;
const DAY_MS = 86_400_000;
const URL = process.env.CLICKHOUSE_URL ?? 'http://127.0.0.1:8123';
const USER = process.env.CLICKHOUSE_USER ?? 'default';
const PASSWORD = process.env.CLICKHOUSE_PASSWORD ?? '';

const ROUTES = ['tts', 'tts', 'tts', 'tts_stream', 'tts_stream', 'audio_speech', 'audio_speech', 'agent_speech', 'dialogue', 'srt', 'voices_create', 'clone'];
const VOICES = Array.from({ length: 40 }, (_, i) => `vi-${['north', 'central', 'south'][i % 3]}-${i % 2 ? 'female' : 'male'}-${i}`);
const DENIED = ['http_400', 'http_401', 'http_402', 'http_404', 'http_410', 'http_429'];
const FAILED = ['synthesis_failed', 'synthesis_timeout', 'engine_unavailable'];

const arr = (values: readonly string[]) => `[${sqlStringList(values)}]`;
/** A pseudo-random integer in [0, n) from the row's base number and a salt: deterministic, so reruns load the same data. */
const pick = (salt: number, n: number) => `(cityHash64(b, ${sqlNumber(salt)}) % ${sqlNumber(n)})`;
/**
 * Account index: account 0 takes TOP_SHARE of the rows; the others share
 * the rest as 1 + floor(999 x v^skew) for v uniform.
 */
const U = `(${pick(1, 1_000_000)} / 1000000)`;
const ACCOUNT_INDEX = `if(${U} < ${sqlNumber(TOP_SHARE)}, toUInt32(0),
  toUInt32(1 + floor(${ACCOUNTS - 1} * pow((${U} - ${sqlNumber(TOP_SHARE)}) / ${sqlNumber(1 - TOP_SHARE)}, ${sqlNumber(SKEW)}))))`;

/** The generated usage_events rows, every version (deterministic: each use generates the same rows). */
function rowsSql(nowMs: number, named: Map<number, string>): string {
  const ids = [...named.keys()].map((i) => sqlNumber(i)).join(', ');
  const names = sqlStringList([...named.values()]);
  // 18.16: no WITH-subquery aliases across levels, so each level computes what the next one needs.
  return `SELECT
  concat('out_', hex(cityHash64(b, 9)), '_', toString(b)) AS id,
  at_ms,
  if(second AND route = 'tts', at_ms + 1000 + ${pick(6, 60000)}, 0) AS version,
  concat('req_', hex(cityHash64(b, 10))) AS request_id,
  account_id,
  concat('key_', account_id, '_', toString(${pick(3, 4)} % (2 + acct % 3))) AS key_id,
  concat('grant_', account_id) AS grant_id,
  route,
  multiIf(result IN ('ok', 'cache_hit'), toUInt16(200), result = 'queued', toUInt16(201), result = 'denied',
    toUInt16(toUInt16OrZero(substring(error_code, 6))), toUInt16(500)) AS status,
  result,
  if(result = 'denied', toFloat64(0), ceil(toFloat64(chars) * 3.9)) AS tokens_charged,
  if(result = 'error', ceil(toFloat64(chars) * 3.9), toFloat64(0)) AS tokens_refunded,
  if(result = 'denied', toUInt64(0), chars) AS characters,
  if(result IN ('ok', 'cache_hit'), toFloat64(chars) / 14, toFloat64(0)) AS audio_seconds,
  if(result IN ('ok', 'error'), toNullable(toFloat64(40 + ${pick(7, 3000)})), CAST(NULL AS Nullable(Float64))) AS gen_ms,
  voice,
  concat('Giọng ', voice) AS voice_name,
  if(${pick(8, 4)} = 0, 'v5', 'v4') AS engine,
  error_code,
  toUInt8(result = 'cache_hit') AS cache_hit,
  toUInt8(route = 'tts') AS queued,
  if(route = 'tts', concat('job_', hex(cityHash64(b, 11))), '') AS job_id
FROM (
  SELECT b, second, acct, account_id, at_ms, route, voice, chars, paired,
    -- A paired tts row is queued first and closed by its second version; a few others are still open.
    multiIf(route = 'tts' AND paired AND NOT second, 'queued', route = 'tts' AND paired, if(roll < 10, 'error', 'ok'),
      route = 'tts' AND roll >= 99, 'queued', roll < 10, 'denied', roll < 16, 'error', roll < 24, 'cache_hit', 'ok') AS result,
    multiIf(result = 'denied', ${arr(DENIED)}[1 + ${pick(4, DENIED.length)}], result = 'error', ${arr(FAILED)}[1 + ${pick(5, FAILED.length)}], '') AS error_code
  FROM (
    SELECT b, second, acct, b % 20 = 0 AS paired,
      transform(acct, [${ids}], [${names}], concat('acct_bench_', toString(acct))) AS account_id,
      toUInt64(${sqlNumber(nowMs)} - ${pick(2, DAYS * DAY_MS)}) AS at_ms,
      ${arr(ROUTES)}[1 + ${pick(12, ROUTES.length)}] AS route,
      ${arr(VOICES)}[1 + ${pick(13, VOICES.length)}] AS voice,
      toUInt64(20 + ${pick(14, 2000)}) AS chars,
      ${pick(15, 100)} AS roll
    FROM (
      SELECT number % 20 = 1 AS second, if(second, toUInt64(number - 1), number) AS b, ${ACCOUNT_INDEX} AS acct
      FROM numbers(${sqlNumber(ROWS)})
    )
  )
)`;
}

/** Row count of every account index, computed without loading anything. */
function accountCountsSql(): string {
  return `SELECT acct, count() AS n FROM (SELECT if(number % 20 = 1, toUInt64(number - 1), number) AS b, ${ACCOUNT_INDEX} AS acct FROM numbers(${sqlNumber(ROWS)}))
GROUP BY acct ORDER BY n DESC, acct`;
}

/**
 * Field by field; fractional sums (audio seconds) may differ in their last
 * bits, since the two sides add the same values in different orders.
 */
function sameReport(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return a === b || Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return a === b;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => sameReport((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}

const pct = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
};
const ms = (v: number) => `${v.toFixed(0)} ms`;

async function timeRuns(runs: number, once: () => Promise<void>): Promise<number[]> {
  for (let i = 0; i < 2; i++) await once();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await once();
    times.push(performance.now() - t0);
  }
  return times;
}

function summary(times: number[]): string {
  return `median ${ms(pct(times, 0.5))}, p95 ${ms(pct(times, 0.95))}, min ${ms(Math.min(...times))}, max ${ms(Math.max(...times))}`;
}

async function main(): Promise<void> {
  const database = `bench_usage_query_${process.pid}_${Date.now()}`;
  // Errors surface as exceptions; the client's own log would print each one a second time.
  const admin = createClient({ url: URL, username: USER, password: PASSWORD, request_timeout: 600_000, log: { level: ClickHouseLogLevel.OFF } });
  const select = async <T>(query: string) => (await admin.query({ query, format: 'JSONEachRow' })).json<T>();
  let platform: TestPlatform | undefined;
  let analytics: Analytics | undefined;
  let failed = false;
  try {
    const version = (await select<{ v: string }>('SELECT version() AS v'))[0]!.v;
    console.log(`usage query benchmark: ClickHouse ${version} at ${URL}, ${ROWS.toLocaleString('en-US')} rows, top account ${(100 * TOP_SHARE).toFixed(0)}% of them, skew ${SKEW} for the rest, ` +
      `${RUNS} runs each; ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(2)}`);

    // Which generated accounts are typical and heavy, before loading: they become platform accounts.
    const counts = (await select<{ acct: number; n: string }>(accountCountsSql())).map((r) => ({ acct: Number(r.acct), n: Number(r.n) }));
    const byRows = [...counts].sort((a, b) => b.n - a.n || a.acct - b.acct);
    const picked = {
      typical: byRows[Math.floor(byRows.length / 2)]!,
      heavy: byRows[Math.floor(ACCOUNTS / 100) - 1]!,
      heaviest: byRows[0]!,
    };

    platform = await startTestPlatform({
      CLICKHOUSE_URL: URL, CLICKHOUSE_DATABASE: database, CLICKHOUSE_USER: USER, CLICKHOUSE_PASSWORD: PASSWORD,
      ACCOUNT_ROUTES_PER_MINUTE: '100000', EDGE_REQUESTS_PER_MINUTE: '0', EDGE_CONNECTIONS: '0',
    });
    const accounts = new Map<keyof typeof picked, { acct: number; rows: number; accountId: string; apiKey: string }>();
    for (const [label, { acct, n }] of Object.entries(picked) as Array<[keyof typeof picked, { acct: number; n: number }]>) {
      const made = await platform.bootstrap({ name: `usage bench ${label}` });
      accounts.set(label, { acct, rows: n, accountId: made.accountId, apiKey: made.apiKey });
    }

    const nowMs = Date.now();
    const named = new Map([...accounts.values()].map((a) => [a.acct, a.accountId]));
    const loadStart = performance.now();
    const generated = rowsSql(nowMs, named);
    const columns = (names: readonly string[]) => names.map(sqlIdentifier).join(', ');
    const qualified = (name: string) => `${sqlIdentifier(database)}.${sqlIdentifier(name)}`;
    const long = { max_execution_time: 600 };
    await admin.command({ query: `INSERT INTO ${qualified(TABLES.events)} (${columns(EVENT_ROW_COLUMNS)}) ${generated}`, clickhouse_settings: long });
    const loadS = (performance.now() - loadStart) / 1000;
    const table = `${sqlIdentifier(database)}.${sqlIdentifier(TABLES.events)}`;
    console.log(`  loaded ${ROWS.toLocaleString('en-US')} rows in ${loadS.toFixed(1)} s (${Math.round(ROWS / loadS).toLocaleString('en-US')}/s)`);
    // The job tables as the live path fills them, from the same generated rows (usage_events may already have
    // merged a queued row into its closed version): every queued row, and the close behind every closed version.
    await admin.command({ query: `INSERT INTO ${qualified(TABLES.jobs)} (${columns(EVENT_ROW_COLUMNS)})
      SELECT * FROM (${generated}) WHERE version = 0 AND result = 'queued' AND job_id != ''`, clickhouse_settings: long });
    await admin.command({ query: `INSERT INTO ${qualified(TABLES.closes)} (${columns(CLOSE_ROW_TYPES.map(([name]) => name))})
      SELECT concat('close_', id), job_id, version, result, audio_seconds, gen_ms, tokens_refunded, error_code
      FROM (${generated}) WHERE version > 0`, clickhouse_settings: long });

    // What a deployment that already holds these raw tables does once at start-up: fill the new aggregate tables from them.
    const backfillStart = performance.now();
    await rebuildAggregates({
      command: async (query) => void (await admin.command({ query, clickhouse_settings: { max_execution_time: 600 } })),
      select: (query) => select<Record<string, unknown>>(query),
    }, database);
    const backfillS = (performance.now() - backfillStart) / 1000;
    console.log(`  backfilled the daily aggregates from the raw tables in ${backfillS.toFixed(1)} s (${Math.round(ROWS / backfillS).toLocaleString('en-US')} raw rows/s)`);
    const parts = async () => Number((await select<{ n: string }>(`SELECT count() AS n FROM system.parts WHERE database = ${sqlString(database)} AND active`))[0]!.n);
    // Background merges would otherwise run during the timings; production tables are mostly merged too.
    const settleUntil = Date.now() + 120_000;
    while (Date.now() < settleUntil && Number((await select<{ n: string }>(`SELECT count() AS n FROM system.merges WHERE database = ${sqlString(database)}`))[0]!.n) > 0) {
      await new Promise((r) => setTimeout(r, 1000));
    }
    const aggregateRows = (await select<{ t: string; n: string }>(`SELECT table AS t, sum(rows) AS n FROM system.parts
      WHERE database = ${sqlString(database)} AND active GROUP BY t ORDER BY t`)).map((r) => `${r.t} ${Number(r.n).toLocaleString('en-US')}`);
    console.log(`  merges settled: ${await parts()} active parts; rows per table: ${aggregateRows.join(', ')}`);

    analytics = await platform.platform.service(coreServices.analytics);
    const to = new Date(nowMs);
    const from = new Date(nowMs - WINDOW_DAYS * DAY_MS);
    /** The same report from the raw rows alone (FINAL over the whole window): the baseline, and the reference. */
    const rawReport = async (query: UsageQuery): Promise<UsageReport> => {
      const rows = (await select<Record<string, unknown>>(usageSql(database, query, usagePlan(from.getTime(), to.getTime(), false)!))).map(parseUsageRow);
      const total = rows.find((row) => row.kind === 't');
      return buildReport(rows, total ? p95FromLevels(total.genCount, total.genAtLevels) : null);
    };
    const medians = new Map<string, { aggregates: number; raw: number; rows: number }>();
    for (const [label, account] of accounts) {
      // The truth, computed another way: distinct events of the window, with the latest version's result.
      const exact = (await select<{ n: string; ok: string }>(`SELECT count() AS n, countIf(r = 'ok') AS ok FROM (
          SELECT id, argMax(result, version) AS r FROM ${table}
          WHERE account_id = ${sqlString(account.accountId)} AND at_ms >= ${sqlNumber(from.getTime())} AND at_ms < ${sqlNumber(to.getTime())}
          GROUP BY id)`))[0]!;
      const query = { scope: 'account' as const, accountId: account.accountId, keyId: null, from, to };
      let reference: UsageReport | undefined;
      const raw = await timeRuns(BASELINE_RUNS, async () => {
        reference = await rawReport(query);
      });
      let report: UsageReport | undefined;
      const direct = await timeRuns(RUNS, async () => {
        report = await analytics!.usage(query);
      });
      let body: { totals: UsageReport['totals'] } | undefined;
      const qs = `?scope=account&from=${encodeURIComponent(from.toISOString())}&to=${encodeURIComponent(to.toISOString())}`;
      const http = await timeRuns(RUNS, async () => {
        const res = await platform!.api(`/usage${qs}`, { key: account.apiKey });
        if (res.status !== 200) throw new Error(`GET /usage answered ${res.status}: ${await res.text()}`);
        body = (await res.json()) as { totals: UsageReport['totals'] };
      });
      const counted = report!.totals.requests === Number(exact.n) && report!.totals.ok === Number(exact.ok) && body!.totals.requests === Number(exact.n);
      const same = sameReport(report, reference);
      if (!counted || !same) failed = true;
      medians.set(label, { aggregates: pct(direct, 0.5), raw: pct(raw, 0.5), rows: account.rows });
      console.log(`  ${label} account (${account.rows.toLocaleString('en-US')} rows in 92 days, ${Number(exact.n).toLocaleString('en-US')} events in the 30-day window)` +
        `${counted ? '' : ` WRONG: report says ${report!.totals.requests} requests / ${report!.totals.ok} ok, exact ${exact.n} / ${exact.ok}`}` +
        `${same ? '' : ` WRONG: the report differs from the raw rows' report:\n${JSON.stringify(report)}\n${JSON.stringify(reference)}`}`);
      console.log(`    analytics.usage():        ${summary(direct)}`);
      console.log(`    GET /usage over HTTP:     ${summary(http)}`);
      console.log(`    raw rows only (baseline): ${summary(raw)}`);
    }
    console.log(`usage query: median of analytics.usage() over a 30-day window, target ${TARGET_MS} ms (raw-rows baseline in brackets):`);
    for (const label of ['heaviest', 'heavy', 'typical'] as const) {
      const { aggregates, raw, rows } = medians.get(label)!;
      console.log(`  ${label.padEnd(8)} (${((100 * rows) / ROWS).toFixed(2)}% of rows): ${ms(aggregates).padStart(7)}, ratio to target ${(aggregates / TARGET_MS).toFixed(2)}` +
        ` (raw ${ms(raw)}, ${(raw / aggregates).toFixed(1)}x faster)`);
      if (aggregates > TARGET_MS) failed = true;
    }
  } finally {
    await platform?.stop();
    await admin.command({ query: `DROP DATABASE IF EXISTS ${sqlIdentifier(database)}` });
    await admin.close();
  }
  if (failed) console.error('FAIL: a median over the target, or a report that does not match the raw rows or the exact count');
  process.exitCode = failed ? 1 : 0;
}

await main();
