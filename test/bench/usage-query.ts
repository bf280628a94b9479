/**
 * GET /usage benchmark: `npx tsx test/bench/usage-query.ts [rows] [--runs=15] [--skew=3]`.
 *
 * Loads `rows` (default 5,000,000) usage rows into a fresh database on the
 * local ClickHouse (CLICKHOUSE_URL, default http://127.0.0.1:8123),
 * generated server-side with INSERT ... SELECT FROM numbers() in SQL that
 * 18.16 accepts: 1000 accounts with a skewed share of the traffic (the top
 * account about 10%, the top 1% about a fifth), 2 to 4 keys each, 92 days,
 * the logical routes, 40 voices, every result and error code. One row in
 * twenty is a second version of its neighbour, as production holds them
 * until merges collapse them: the closed version of a queued `tts` row, or a
 * redelivered duplicate of any other; 1% of `tts` jobs are still open. So
 * every timing includes the dedupe.
 *
 * Then times `usage({ scope: 'account', 30 days })` through the ClickHouse
 * adapter and `GET /usage?scope=account` over HTTP through the real platform
 * (three of the generated accounts belong to platform accounts made for the
 * run), for a typical account (the median by rows), a heavy one (the top
 * 1%) and the heaviest: median, p95, min and max of `--runs` runs after two
 * warm-ups. Each report is checked against an independent exact count of
 * that account's distinct events. Exits 1 when the typical or the heavy
 * account's median is over 300 ms or a report is wrong. Drops the database.
 */
import { ClickHouseLogLevel, createClient } from '@clickhouse/client';
import os from 'node:os';
import { EVENT_ROW_TYPES, TABLES } from '../../core/adapters/analytics/clickhouse-schema.ts';
import { sqlIdentifier, sqlNumber, sqlString, sqlStringList } from '../../core/adapters/analytics/clickhouse-sql.ts';
import type { Analytics, UsageReport } from '../../core/ports/analytics.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { coreServices } from '../../core/services.ts';

const args = process.argv.slice(2);
const flag = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const ROWS = Number(args.find((a) => /^\d+$/.test(a)) ?? 5_000_000);
const RUNS = Math.max(15, Number(flag('runs') ?? 15));
/** exponent k of the account skew floor(1000 x u^k): 3 gives the top account ~10% of rows; 31 gives it ~80% (the pathological case) */
const SKEW = Number(flag('skew') ?? 3);
const TARGET_MS = 300;
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
 * Account index with a skewed share: floor(1000 x u^3) for u uniform, so
 * account 0 has about 10% of all rows, the top 1% about 21%, and the median
 * account about 0.05%.
 */
const ACCOUNT_INDEX = `toUInt32(floor(${ACCOUNTS} * pow(${pick(1, 1_000_000)} / 1000000, ${sqlNumber(SKEW)})))`;

function insertSql(database: string, nowMs: number, named: Map<number, string>): string {
  const table = `${sqlIdentifier(database)}.${sqlIdentifier(TABLES.events)}`;
  const columns = EVENT_ROW_TYPES.map(([name]) => sqlIdentifier(name)).join(', ');
  const ids = [...named.keys()].map((i) => sqlNumber(i)).join(', ');
  const names = sqlStringList([...named.values()]);
  // 18.16: no WITH-subquery aliases across levels, so each level computes what the next one needs.
  return `INSERT INTO ${table} (${columns})
SELECT
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
  if(result = 'denied', toFloat64(0), toFloat64(chars) * 3.9) AS tokens_charged,
  if(result = 'error', toFloat64(chars) * 3.9, toFloat64(0)) AS tokens_refunded,
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
    console.log(`usage query benchmark: ClickHouse ${version} at ${URL}, ${ROWS.toLocaleString('en-US')} rows, skew ${SKEW}, ${RUNS} runs each; ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(2)}`);

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
    await admin.command({ query: insertSql(database, nowMs, named), clickhouse_settings: { max_execution_time: 600 } });
    const loadS = (performance.now() - loadStart) / 1000;
    const table = `${sqlIdentifier(database)}.${sqlIdentifier(TABLES.events)}`;
    const parts = async () => Number((await select<{ n: string }>(`SELECT count() AS n FROM system.parts WHERE database = ${sqlString(database)} AND table = ${sqlString(TABLES.events)} AND active`))[0]!.n);
    console.log(`  loaded ${ROWS.toLocaleString('en-US')} rows in ${loadS.toFixed(1)} s (${Math.round(ROWS / loadS).toLocaleString('en-US')}/s), ${await parts()} active parts`);
    // Background merges would otherwise run during the timings; production tables are mostly merged too.
    const settleUntil = Date.now() + 120_000;
    while (Date.now() < settleUntil && Number((await select<{ n: string }>(`SELECT count() AS n FROM system.merges WHERE database = ${sqlString(database)}`))[0]!.n) > 0) {
      await new Promise((r) => setTimeout(r, 1000));
    }
    console.log(`  merges settled: ${await parts()} active parts`);

    analytics = await platform.platform.service(coreServices.analytics);
    const to = new Date(nowMs);
    const from = new Date(nowMs - WINDOW_DAYS * DAY_MS);
    const medians = new Map<string, number>();
    for (const [label, account] of accounts) {
      // The truth, computed another way: distinct events of the window, with the latest version's result.
      const exact = (await select<{ n: string; ok: string }>(`SELECT count() AS n, countIf(r = 'ok') AS ok FROM (
          SELECT id, argMax(result, version) AS r FROM ${table}
          WHERE account_id = ${sqlString(account.accountId)} AND at_ms >= ${sqlNumber(from.getTime())} AND at_ms < ${sqlNumber(to.getTime())}
          GROUP BY id)`))[0]!;
      const query = { scope: 'account' as const, accountId: account.accountId, keyId: null, from, to };
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
      const right = report!.totals.requests === Number(exact.n) && report!.totals.ok === Number(exact.ok) && body!.totals.requests === Number(exact.n);
      if (!right) failed = true;
      medians.set(label, pct(direct, 0.5));
      console.log(`  ${label} account (${account.rows.toLocaleString('en-US')} rows in 92 days, ${Number(exact.n).toLocaleString('en-US')} events in the 30-day window)` +
        `${right ? '' : ` WRONG: report says ${report!.totals.requests} requests / ${report!.totals.ok} ok, exact ${exact.n} / ${exact.ok}`}`);
      console.log(`    analytics.usage():        ${summary(direct)}`);
      console.log(`    GET /usage over HTTP:     ${summary(http)}`);
    }
    for (const label of ['typical', 'heavy'] as const) {
      const median = medians.get(label)!;
      console.log(`  ${label}: median ${ms(median)}, ratio to the ${TARGET_MS} ms target ${(median / TARGET_MS).toFixed(2)}`);
      if (median > TARGET_MS) failed = true;
    }
  } finally {
    await platform?.stop();
    await admin.command({ query: `DROP DATABASE IF EXISTS ${sqlIdentifier(database)}` });
    await admin.close();
  }
  if (failed) console.error('FAIL: a median over the target, or a report that does not match the exact count');
  process.exitCode = failed ? 1 : 0;
}

await main();
