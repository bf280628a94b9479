import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createClient } from '@clickhouse/client';
import type { Analytics, JobCloseEvent, OutcomeEvent, UsageQuery } from '../../core/ports/analytics.ts';
import { openEmbeddedDb } from '../../core/adapters/embedded-db.ts';
import { createSqliteAnalytics } from '../../core/adapters/analytics/sqlite.ts';
import { rebuildCells } from '../../core/adapters/analytics/sqlite-usage-cells.ts';
import { createClickHouseAnalytics } from '../../core/adapters/analytics/clickhouse.ts';
import { sqlIdentifier, sqlString } from '../../core/adapters/analytics/clickhouse-sql.ts';
import { aggregateStatements } from '../../core/adapters/analytics/clickhouse-aggregates.ts';
import { dropAggregateStatements, ensureAggregates } from '../../core/adapters/analytics/clickhouse-backfill.ts';
import { reachable } from '../helpers/reachable.ts';

const FROM = new Date('2026-03-01T00:00:00.000Z');
const TO = new Date('2026-03-03T00:00:00.000Z');

/** Windows the exactness tests ask for: cut at midnight, in UTC+7, mid-day, inside one day. */
const HISTORY_WINDOWS: Array<[string, string]> = [
  ['2026-03-01T00:00:00.000Z', '2026-03-04T00:00:00.000Z'],
  ['2026-02-28T17:00:00.000Z', '2026-03-03T17:00:00.000Z'],
  ['2026-03-01T05:13:07.123Z', '2026-03-03T20:00:00.000Z'],
  ['2026-03-02T01:00:00.000Z', '2026-03-02T23:00:00.000Z'],
  // Last days read whole from the aggregates less the rows after the window (more inside than after).
  ['2026-03-01T05:13:07.123Z', '2026-03-03T14:00:00.000Z'],
  ['2026-03-01T00:00:00.000Z', '2026-03-02T18:45:00.000Z'],
];

function outcome(id: string, at: string, fields: Partial<OutcomeEvent>): OutcomeEvent {
  return {
    id, at, requestId: `req-${id}`, accountId: null, keyId: null, grantId: 'grant-1', route: 'tts', status: 200,
    result: 'ok', tokensCharged: 0, tokensRefunded: 0, characters: 0, audioSeconds: 0, genMs: null, voice: null,
    voiceName: null, engine: null, errorCode: null, cacheHit: false, queued: false, jobId: null, ...fields,
  };
}

/** Ten requests of one account over two days, three queued jobs, and rows that must stay out of the window. */
function fixture(p: string) {
  const A = `${p}acct-A`;
  const k1 = `${p}key-1`;
  const k2 = `${p}key-2`;
  const va = { voice: `${p}v_a`, voiceName: 'Mai (giọng nữ)', engine: 'v4' };
  const vb = { voice: `${p}v_b`, voiceName: 'Nam', engine: 'v4' };
  const d1 = (time: string) => `2026-03-01T${time}Z`;
  const d2 = (time: string) => `2026-03-02T${time}Z`;
  const ev = (n: string, at: string, key: string, fields: Partial<OutcomeEvent>) =>
    outcome(`${p}${n}`, at, { accountId: A, keyId: key, ...fields });
  const outcomes = [
    ev('e0', d1('00:00:00.000'), k2, { route: 'srt', tokensCharged: 65, characters: 50, audioSeconds: 1.25, genMs: 200 }),
    ev('e1', d1('10:00:00.000'), k1, { route: 'audio_speech', tokensCharged: 195, characters: 50, audioSeconds: 2.5, genMs: 100, ...va }),
    ev('e2', d1('11:00:00.000'), k1, { route: 'audio_speech', tokensCharged: 390, characters: 100, audioSeconds: 5, genMs: 300, ...va }),
    ev('e3', d1('12:00:00.000'), k2, { result: 'cache_hit', cacheHit: true, tokensCharged: 195, characters: 50, audioSeconds: 2, ...vb }),
    ev('e4', d2('09:00:00.000'), k1, { result: 'denied', status: 403, errorCode: 'http_403', ...va }),
    ev('e5', d2('09:30:00.000'), k2, { route: 'dialogue', result: 'denied', status: 429, errorCode: 'http_429', voice: `${p}v_c` }),
    ev('e6', d2('10:00:00.000'), k1, { route: 'tts_stream', result: 'error', status: 500, errorCode: 'synthesis_failed', tokensCharged: 195, tokensRefunded: 195, characters: 50, genMs: 50, ...vb }),
    ev('e7', d2('11:00:00.000'), k1, { result: 'queued', status: 202, queued: true, jobId: `${p}job-1`, tokensCharged: 390, characters: 100, ...va }),
    ev('e8', d2('12:00:00.000'), k2, { result: 'queued', status: 202, queued: true, jobId: `${p}job-2`, tokensCharged: 195, characters: 50, ...vb }),
    ev('e9', d2('13:00:00.000'), k1, { result: 'queued', status: 202, queued: true, jobId: `${p}job-3`, tokensCharged: 195, characters: 50, ...va }),
    ev('x1', '2026-02-28T23:59:59.999Z', k1, { tokensCharged: 1000, characters: 1000, genMs: 9999, ...va }),
    ev('x2', '2026-03-03T00:00:00.000Z', k1, { tokensCharged: 1000, characters: 1000, genMs: 9999, ...va }),
    outcome(`${p}b1`, d1('10:00:00.000'), { accountId: `${p}acct-B`, keyId: k1, tokensCharged: 1000, genMs: 9999, ...va }),
  ];
  const closes: JobCloseEvent[] = [
    { id: `${p}c1`, at: d2('11:00:30.000'), jobId: `${p}job-1`, result: 'ok', audioSeconds: 6, genMs: 500, tokensRefunded: 0, errorCode: null },
    { id: `${p}c2`, at: d2('12:01:00.000'), jobId: `${p}job-2`, result: 'error', audioSeconds: 0, genMs: null, tokensRefunded: 195, errorCode: 'synthesis_timeout' },
  ];
  const account: UsageQuery = { scope: 'account', accountId: A, keyId: null, from: FROM, to: TO };
  return { outcomes, closes, account, k1, k2, va, vb, p, at: (n: string) => outcomes.find((o) => o.id === `${p}${n}`)!.at };
}

let prefixCounter = 0;
const uniquePrefix = (label: string) => `${label}${++prefixCounter}'\\"-`;

function analyticsContract(name: string, open: () => Promise<Analytics>) {
  let analytics: Analytics;
  test.before(async () => {
    analytics = await open();
  });
  test.after.always(async () => {
    await analytics?.close();
  });

  const recorded = async (label: string) => {
    const f = fixture(uniquePrefix(label));
    await analytics.recordOutcomes(f.outcomes);
    await analytics.recordJobCloses(f.closes);
    return f;
  };

  test(`${name}: totals count every request by result, tokens before refunds, characters, audio and generation time`, async (t) => {
    const f = await recorded('totals');
    const report = await analytics.usage(f.account);
    t.deepEqual(report.totals, {
      requests: 10, ok: 4, queued: 1, cacheHit: 1, denied: 2, error: 2,
      tokenCost: 1820, characters: 500, audioSeconds: 16.75, avgGenMs: 230, p95GenMs: 500,
    });
  });

  test(`${name}: byDay rows are UTC days in order`, async (t) => {
    const f = await recorded('day');
    const { byDay } = await analytics.usage(f.account);
    t.deepEqual(byDay, [
      { day: '2026-03-01', requests: 4, ok: 3, denied: 0, error: 0, tokenCost: 845, characters: 250, audioSeconds: 10.75, avgGenMs: 200 },
      { day: '2026-03-02', requests: 6, ok: 1, denied: 2, error: 2, tokenCost: 975, characters: 250, audioSeconds: 6, avgGenMs: 275 },
    ]);
  });

  test(`${name}: byRoute rows use the logical route name, most requests first`, async (t) => {
    const f = await recorded('route');
    const { byRoute } = await analytics.usage(f.account);
    t.deepEqual(byRoute, [
      { route: 'tts', requests: 5, ok: 1, denied: 1, error: 1, tokenCost: 975, avgGenMs: 500 },
      { route: 'audio_speech', requests: 2, ok: 2, denied: 0, error: 0, tokenCost: 585, avgGenMs: 200 },
      { route: 'dialogue', requests: 1, ok: 0, denied: 1, error: 0, tokenCost: 0, avgGenMs: null },
      { route: 'srt', requests: 1, ok: 1, denied: 0, error: 0, tokenCost: 65, avgGenMs: 200 },
      { route: 'tts_stream', requests: 1, ok: 0, denied: 0, error: 1, tokenCost: 195, avgGenMs: 50 },
    ]);
  });

  test(`${name}: byVoice counts error rows as errors and leaves out requests without a voice`, async (t) => {
    const f = await recorded('voice');
    const { byVoice } = await analytics.usage(f.account);
    t.deepEqual(byVoice, [
      { voice: f.va.voice, voiceName: f.va.voiceName, engine: 'v4', requests: 5, tokenCost: 1170, audioSeconds: 13.5, avgGenMs: 300, errors: 0 },
      { voice: f.vb.voice, voiceName: 'Nam', engine: 'v4', requests: 3, tokenCost: 585, audioSeconds: 2, avgGenMs: 50, errors: 2 },
      { voice: `${f.p}v_c`, voiceName: null, engine: null, requests: 1, tokenCost: 0, audioSeconds: 0, avgGenMs: null, errors: 0 },
    ]);
  });

  test(`${name}: byErrorCode groups by code and status, 4xx refusals as http_<status>`, async (t) => {
    const f = await recorded('errors');
    const { byErrorCode } = await analytics.usage(f.account);
    t.deepEqual(byErrorCode, [
      { errorCode: 'http_403', statusCode: 403, count: 1, lastAt: f.at('e4') },
      { errorCode: 'http_429', statusCode: 429, count: 1, lastAt: f.at('e5') },
      { errorCode: 'synthesis_failed', statusCode: 500, count: 1, lastAt: f.at('e6') },
      { errorCode: 'synthesis_timeout', statusCode: 500, count: 1, lastAt: f.at('e8') },
    ]);
  });

  test(`${name}: scope key counts only that key, scope account every key of the account`, async (t) => {
    const f = await recorded('scope');
    const one = await analytics.usage({ ...f.account, scope: 'key', keyId: f.k1 });
    const two = await analytics.usage({ ...f.account, scope: 'key', keyId: f.k2 });
    t.like(one.totals, { requests: 6, ok: 3, queued: 1, cacheHit: 0, denied: 1, error: 1, tokenCost: 1365 });
    t.like(two.totals, { requests: 4, ok: 1, queued: 0, cacheHit: 1, denied: 1, error: 1, tokenCost: 455 });
    const other = await analytics.usage({ ...f.account, accountId: `${f.p}acct-B` });
    t.like(other.totals, { requests: 1, tokenCost: 1000 });
  });

  test(`${name}: the window includes from and excludes to`, async (t) => {
    const f = await recorded('window');
    const wide = await analytics.usage({ ...f.account, from: new Date('2026-02-28T00:00:00Z'), to: new Date('2026-03-04T00:00:00Z') });
    t.is(wide.totals.requests, 12);
    const firstInstant = await analytics.usage({ ...f.account, to: new Date(FROM.getTime() + 1) });
    t.like(firstInstant.totals, { requests: 1, tokenCost: 65 });
  });

  test(`${name}: the same events recorded twice count once`, async (t) => {
    const f = await recorded('idem');
    const before = await analytics.usage(f.account);
    await analytics.recordOutcomes([...f.outcomes].reverse());
    await analytics.recordOutcomes([f.outcomes[1]!, f.outcomes[1]!]);
    await analytics.recordJobCloses([...f.closes, ...f.closes]);
    t.deepEqual(await analytics.usage(f.account), before);
  });

  test(`${name}: a queued row counts as queued until its job closes as ok or error`, async (t) => {
    const f = fixture(uniquePrefix('close'));
    await analytics.recordOutcomes(f.outcomes);
    const open = await analytics.usage(f.account);
    t.like(open.totals, { requests: 10, ok: 3, queued: 3, error: 1, audioSeconds: 10.75, avgGenMs: 162.5 });
    await analytics.recordJobCloses(f.closes);
    const closed = await analytics.usage(f.account);
    t.like(closed.totals, { requests: 10, ok: 4, queued: 1, error: 2, audioSeconds: 16.75, avgGenMs: 230, tokenCost: 1820 });
  });

  test(`${name}: a close that arrives before its queued row still closes it`, async (t) => {
    const f = fixture(uniquePrefix('early'));
    await analytics.recordJobCloses(f.closes);
    await analytics.recordOutcomes(f.outcomes);
    t.like((await analytics.usage(f.account)).totals, { ok: 4, queued: 1, error: 2, audioSeconds: 16.75 });
  });

  test(`${name}: an empty window answers zeros, nulls and empty lists`, async (t) => {
    const f = await recorded('empty');
    const report = await analytics.usage({ ...f.account, from: new Date('2025-01-01T00:00:00Z'), to: new Date('2025-01-31T00:00:00Z') });
    t.deepEqual(report, {
      totals: { requests: 0, ok: 0, queued: 0, cacheHit: 0, denied: 0, error: 0, tokenCost: 0, characters: 0, audioSeconds: 0, avgGenMs: null, p95GenMs: null },
      byDay: [], byRoute: [], byVoice: [], byErrorCode: [],
    });
  });

  test(`${name}: p95GenMs is the value at position floor(0.95 x n) of the sorted generation times`, async (t) => {
    const p = uniquePrefix('p95');
    const events = Array.from({ length: 40 }, (_, i) =>
      outcome(`${p}g${i}`, `2026-03-01T01:${String(i).padStart(2, '0')}:00.000Z`, { accountId: `${p}A`, genMs: (i * 37) % 40 + 1 }));
    await analytics.recordOutcomes(events);
    const { totals } = await analytics.usage({ scope: 'account', accountId: `${p}A`, keyId: null, from: FROM, to: TO });
    t.like(totals, { requests: 40, p95GenMs: 39, avgGenMs: 20.5 });
  });

  test(`${name}: the same events written by two writers at once count once`, async (t) => {
    const f = fixture(uniquePrefix('race'));
    // Both consumers at once, each twice: every outcome and every close is stored and resolved concurrently.
    await Promise.all([
      analytics.recordOutcomes(f.outcomes), analytics.recordJobCloses(f.closes),
      analytics.recordOutcomes([...f.outcomes].reverse()), analytics.recordJobCloses([...f.closes].reverse()),
    ]);
    await Promise.all([analytics.recordOutcomes(f.outcomes.slice(0, 9)), analytics.recordJobCloses(f.closes), analytics.recordOutcomes(f.outcomes.slice(5))]);
    t.deepEqual((await analytics.usage(f.account)).totals, {
      requests: 10, ok: 4, queued: 1, cacheHit: 1, denied: 2, error: 2,
      tokenCost: 1820, characters: 500, audioSeconds: 16.75, avgGenMs: 230, p95GenMs: 500,
    });
  });

  test(`${name}: a job counts by its latest close; a close older than the one counted changes nothing`, async (t) => {
    const p = uniquePrefix('reclose');
    const A = `${p}A`;
    const job = `${p}job`;
    const day = (time: string) => `2026-03-01T${time}Z`;
    const earlier = outcome(`${p}r`, day('09:00:00.000'), { accountId: A, keyId: 'k', result: 'error', status: 500, errorCode: 'synthesis_failed', voice: 'v' });
    const queued = outcome(`${p}q`, day('10:00:00.000'), { accountId: A, keyId: 'k', result: 'queued', status: 202, queued: true, jobId: job, tokensCharged: 195, voice: 'v' });
    const close = (id: string, time: string, fields: Partial<JobCloseEvent>): JobCloseEvent => ({
      id: `${p}${id}`, at: day(time), jobId: job, result: 'error', audioSeconds: 0, genMs: null, tokensRefunded: 0, errorCode: 'synthesis_failed', ...fields,
    });
    const query: UsageQuery = { scope: 'account', accountId: A, keyId: null, from: FROM, to: TO };
    await analytics.recordOutcomes([earlier, queued]);
    await analytics.recordJobCloses([close('c1', '10:01:00.000', {})]);
    const failed = await analytics.usage(query);
    t.like(failed.totals, { requests: 2, ok: 0, queued: 0, error: 2 });
    t.deepEqual(failed.byErrorCode, [{ errorCode: 'synthesis_failed', statusCode: 500, count: 2, lastAt: queued.at }]);

    await analytics.recordJobCloses([close('c2', '10:05:00.000', { result: 'ok', audioSeconds: 3, genMs: 700, errorCode: null })]);
    await analytics.recordJobCloses([close('c0', '10:00:30.000', { errorCode: 'synthesis_timeout' })]);
    await analytics.recordOutcomes([queued]);
    await analytics.recordJobCloses([close('c1', '10:01:00.000', {})]);
    const completed = await analytics.usage(query);
    t.deepEqual(completed.totals, {
      requests: 2, ok: 1, queued: 0, cacheHit: 0, denied: 0, error: 1, tokenCost: 195, characters: 0, audioSeconds: 3, avgGenMs: 700, p95GenMs: 700,
    });
    t.deepEqual(completed.byErrorCode, [{ errorCode: 'synthesis_failed', statusCode: 500, count: 1, lastAt: earlier.at }]);
    t.deepEqual(completed.byVoice.map((v) => [v.voice, v.requests, v.errors]), [['v', 2, 1]]);
  });

  test(`${name}: names and last times come from rows inside the window, rows later that day do not count`, async (t) => {
    const p = uniquePrefix('later');
    const A = `${p}A`;
    const row = (n: string, at: string, fields: Partial<OutcomeEvent>) => outcome(`${p}${n}`, at, { accountId: A, keyId: 'k', voice: 'v', voiceName: 'Mai', engine: 'v4', ...fields });
    const failed = { result: 'error' as const, status: 500, errorCode: 'synthesis_failed' };
    await analytics.recordOutcomes([
      row('a', '2026-03-01T10:00:00.000Z', {}),
      row('b', '2026-03-02T08:00:00.000Z', failed),
      row('c', '2026-03-02T15:00:00.000Z', { ...failed, voiceName: 'Mai (mới)', engine: 'v5' }),
    ]);
    // 13 hours of the last day inside the window, 11 after it.
    const report = await analytics.usage({ scope: 'account', accountId: A, keyId: null, from: FROM, to: new Date('2026-03-02T13:00:00.000Z') });
    t.deepEqual(report.byVoice, [{ voice: 'v', voiceName: 'Mai', engine: 'v4', requests: 2, tokenCost: 0, audioSeconds: 0, avgGenMs: null, errors: 1 }]);
    t.deepEqual(report.byErrorCode, [{ errorCode: 'synthesis_failed', statusCode: 500, count: 1, lastAt: '2026-03-02T08:00:00.000Z' }]);
  });

  test(`${name}: a window cut at midnight in UTC+7 counts the partial UTC days at both ends`, async (t) => {
    const f = await recorded('vn-day');
    await analytics.recordOutcomes(f.outcomes.slice(3, 8));
    const window = { ...f.account, from: new Date('2026-02-28T17:00:00.000Z'), to: new Date('2026-03-02T17:00:00.000Z') };
    const report = await analytics.usage(window);
    t.deepEqual(report.totals, {
      requests: 11, ok: 5, queued: 1, cacheHit: 1, denied: 2, error: 2,
      tokenCost: 2820, characters: 1500, audioSeconds: 16.75, avgGenMs: 1858.2, p95GenMs: 9999,
    });
    t.deepEqual(report.byDay.map((d) => [d.day, d.requests, d.tokenCost]), [['2026-02-28', 1, 1000], ['2026-03-01', 4, 845], ['2026-03-02', 6, 975]]);
    const lateStart = await analytics.usage({ ...f.account, from: new Date('2026-03-01T10:30:00.000Z'), to: new Date('2026-03-02T11:30:00.000Z') });
    t.like(lateStart.totals, { requests: 6, ok: 2, queued: 0, cacheHit: 1, denied: 2, error: 1, tokenCost: 1170 });
    t.deepEqual(lateStart.byDay.map((d) => [d.day, d.requests]), [['2026-03-01', 2], ['2026-03-02', 4]]);
  });

  test(`${name}: ping answers`, async (t) => {
    await t.notThrowsAsync(analytics.ping());
  });
}

const dataDir = mkdtempSync(path.join(tmpdir(), 'analytics-contract-'));
const db = openEmbeddedDb(dataDir);
test.after.always(() => {
  db.close();
  rmSync(dataDir, { recursive: true, force: true });
});
analyticsContract('sqlite', async () => createSqliteAnalytics(db));
analyticsContract('sqlite read from raw rows only', async () => createSqliteAnalytics(db, { dailyCells: false }));

test('sqlite daily cells answer exactly what the raw rows answer for a history with duplicates, late and repeated closes, then again once rebuilt', async (t) => {
  const p = uniquePrefix('cells');
  const { rounds, accounts } = history(p, 20261125);
  const cellsDir = mkdtempSync(path.join(tmpdir(), 'analytics-cells-'));
  const file = openEmbeddedDb(cellsDir);
  try {
    const cells = createSqliteAnalytics(file);
    const raw = createSqliteAnalytics(file, { dailyCells: false });
    for (const batch of rounds.flat()) {
      if (batch.kind === 'outcomes') await cells.recordOutcomes(batch.events);
      else await cells.recordJobCloses(batch.events);
    }
    const windows = [...HISTORY_WINDOWS,
      // Windows ending after every row (the last day read whole from its cells) and cut at a UTC midnight.
      ['2026-02-20T06:00:00.000Z', '2026-03-05T06:00:00.000Z'], ['2026-03-02T00:00:00.000Z', '2026-03-04T09:00:00.000Z'],
      ['2026-03-03T00:00:00.000Z', '2026-03-03T00:00:00.001Z']];
    const queries: UsageQuery[] = accounts.flatMap((accountId) => windows.flatMap(([from, to]) => [
      { scope: 'account' as const, accountId, keyId: null, from: new Date(from!), to: new Date(to!) },
      { scope: 'key' as const, accountId, keyId: `${accountId}-key-1`, from: new Date(from!), to: new Date(to!) },
    ]));
    const compare = async (stage: string) => {
      for (const query of queries) {
        t.deepEqual(await cells.usage(query), await raw.usage(query), `${stage}: ${query.scope} ${query.accountId} ${query.from.toISOString()} to ${query.to.toISOString()}`);
      }
    };
    await compare('live');
    const moved = file.prepare(`SELECT COUNT(*) FROM usage_job_closes GROUP BY job_id HAVING COUNT(*) > 1`).pluck().all().length;
    t.true(moved > 0, 'some jobs closed twice');
    rebuildCells(file);
    await compare('rebuilt');
    await cells.close();
    await raw.close();
  } finally {
    file.close();
    rmSync(cellsDir, { recursive: true, force: true });
  }
});

const clickhouseUrl = process.env.CLICKHOUSE_URL ?? 'http://127.0.0.1:8123';
if (reachable(new URL('/ping', clickhouseUrl).href)) {
  const database = `usage_contract_${process.pid}_${Date.now()}`;
  const options = { url: clickhouseUrl, database, user: process.env.CLICKHOUSE_USER ?? 'default', password: process.env.CLICKHOUSE_PASSWORD ?? '' };
  test.after.always(async () => {
    // A drop waits for the merges running on its tables to stop, which takes a while on a busy server.
    const admin = createClient({ url: options.url, username: options.user, password: options.password, request_timeout: 180_000 });
    await admin.command({ query: `DROP DATABASE IF EXISTS ${sqlIdentifier(database)}` });
    await admin.close();
  });
  analyticsContract('clickhouse', () => createClickHouseAnalytics(options));
  exactnessAgainstSqlite(options);
} else {
  console.log(`analytics contract: ClickHouse not reachable at ${clickhouseUrl}; skipping the ClickHouse adapter`);
}

/** A small deterministic generator, so a failure replays the same history. */
function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  return { next, int: (n: number) => Math.floor(next() * n), pick: <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]! };
}

/**
 * Three days of traffic for two accounts with everything the pre-aggregates
 * could get wrong: outcomes and closes redelivered, written by several
 * writers at once, closes before their queued rows, jobs closed twice (the
 * later close counts), jobs never closed.
 */
function history(p: string, seed: number) {
  const r = random(seed);
  const start = Date.parse('2026-03-01T00:00:00.000Z');
  const outcomes: OutcomeEvent[] = [];
  const closes: JobCloseEvent[] = [];
  for (let i = 0; i < 240; i++) {
    const at = start + r.int(3 * 86_400_000);
    const accountId = `${p}acct-${r.int(2)}`;
    const voice = r.pick([null, `${p}v1`, `${p}v2`, `${p}v3`]);
    const base = {
      accountId, keyId: `${accountId}-key-${r.int(2)}`, route: r.pick(['tts', 'audio_speech', 'tts_stream', 'dialogue']),
      tokensCharged: 65 * (1 + r.int(6)), characters: 50 + r.int(400), audioSeconds: 0.25 * r.int(40), genMs: 20 + r.int(900),
      // A voice's name and engine vary now and then, so that which rows a max() reads shows.
      voice, voiceName: voice && `Giọng ${voice.slice(-2)}${r.int(10) === 0 ? ' (mới)' : ''}`, engine: voice && (r.int(10) === 0 ? 'v5' : 'v4'),
    };
    const roll = r.int(100);
    const id = `${p}o${i}`;
    const when = new Date(at).toISOString();
    if (roll < 30) {
      const jobId = `${p}job${i}`;
      outcomes.push(outcome(id, when, { ...base, route: 'tts', result: 'queued', status: 202, queued: true, jobId, audioSeconds: 0, genMs: null }));
      const count = r.int(100) < 15 ? 0 : r.int(100) < 25 ? 2 : 1;
      for (let c = 0; c < count; c++) {
        const ok = r.int(100) < 70;
        closes.push({
          id: `${p}close${i}-${c}`, at: new Date(at + 1000 + r.int(600_000)).toISOString(), jobId, result: ok ? 'ok' : 'error',
          audioSeconds: ok ? 0.25 * r.int(60) : 0, genMs: ok ? 100 + r.int(2000) : null, tokensRefunded: ok ? 0 : base.tokensCharged,
          errorCode: ok ? null : r.pick(['synthesis_failed', 'synthesis_timeout']),
        });
      }
    } else if (roll < 36) {
      outcomes.push(outcome(id, when, { ...base, result: 'cache_hit', cacheHit: true, genMs: null }));
    } else if (roll < 48) {
      const status = r.pick([400, 403, 429]);
      outcomes.push(outcome(id, when, { ...base, result: 'denied', status, errorCode: `http_${status}`, tokensCharged: 0, characters: 0, audioSeconds: 0, genMs: null }));
    } else if (roll < 60) {
      outcomes.push(outcome(id, when, { ...base, result: 'error', status: 500, errorCode: r.pick(['synthesis_failed', 'engine_unavailable']), tokensRefunded: base.tokensCharged }));
    } else {
      outcomes.push(outcome(id, when, base));
    }
  }
  // Deliveries: shuffled batches where a third of the events come again later, some batches written at once.
  type Batch = { kind: 'outcomes'; events: OutcomeEvent[] } | { kind: 'closes'; events: JobCloseEvent[] };
  const deliveries: Array<OutcomeEvent | JobCloseEvent> = [...outcomes, ...closes];
  deliveries.push(...deliveries.filter(() => r.int(3) === 0));
  for (let i = deliveries.length - 1; i > 0; i--) {
    const j = r.int(i + 1);
    [deliveries[i], deliveries[j]] = [deliveries[j]!, deliveries[i]!];
  }
  const rounds: Batch[][] = [];
  while (deliveries.length > 0) {
    const round: Batch[] = [];
    for (let w = 1 + r.int(3); w > 0 && deliveries.length > 0; w--) {
      const taken = deliveries.splice(0, 1 + r.int(40));
      const outs = taken.filter((e): e is OutcomeEvent => 'requestId' in e);
      const cls = taken.filter((e): e is JobCloseEvent => !('requestId' in e));
      if (outs.length > 0) round.push({ kind: 'outcomes', events: outs });
      if (cls.length > 0) round.push({ kind: 'closes', events: cls });
    }
    rounds.push(round);
  }
  return { rounds, accounts: [`${p}acct-0`, `${p}acct-1`] };
}

function exactnessAgainstSqlite(options: { url: string; database: string; user: string; password: string }) {
  const windows = HISTORY_WINDOWS;
  test('clickhouse pre-aggregates answer exactly what sqlite answers for a history with duplicates, concurrent writers and late closes, then again once rebuilt from the raw tables', async (t) => {
    t.timeout(120_000);
    const p = uniquePrefix('history');
    const { rounds, accounts } = history(p, 20260301);
    const reference = createSqliteAnalytics(db);
    const clickhouse = await createClickHouseAnalytics(options);
    try {
      for (const round of rounds) {
        for (const batch of round) {
          if (batch.kind === 'outcomes') await reference.recordOutcomes(batch.events);
          else await reference.recordJobCloses(batch.events);
        }
        await Promise.all(round.map((batch) => (batch.kind === 'outcomes' ? clickhouse.recordOutcomes(batch.events) : clickhouse.recordJobCloses(batch.events))));
      }
      const queries: UsageQuery[] = accounts.flatMap((accountId) => windows.flatMap(([from, to]) => [
        { scope: 'account' as const, accountId, keyId: null, from: new Date(from), to: new Date(to) },
        { scope: 'key' as const, accountId, keyId: `${accountId}-key-1`, from: new Date(from), to: new Date(to) },
      ]));
      const compare = async (stage: string) => {
        for (const query of queries) {
          const expected = await reference.usage(query);
          t.true(expected.totals.requests > 0);
          t.deepEqual(await clickhouse.usage(query), expected, `${stage}: ${query.scope} ${query.accountId} ${query.from.toISOString()} to ${query.to.toISOString()}`);
        }
      };
      await compare('live');
      const admin = createClient({ url: options.url, username: options.user, password: options.password });
      try {
        // The history did exercise the corrections: duplicated contributions were found and recorded.
        const fixes = await (await admin.query({ query: `SELECT count() AS n, countIf(sign < 0) AS retractions FROM ${sqlIdentifier(options.database)}.usage_daily_fixes FINAL WHERE startsWith(account_id, ${sqlString(p)})`, format: 'JSONEachRow' })).json<{ n: string; retractions: string }>();
        t.log(`duplicated contributions recorded: ${fixes[0]!.n} (${fixes[0]!.retractions} of them retractions)`);
        t.true(Number(fixes[0]!.n) > 0);
        // Rebuild as an upgrade meets it: the tables are new, a live writer is already writing into them (here: a
        // redelivery of the last rounds) when the elected process backfills from the raw tables, which hold the same events.
        const sql = {
          command: async (query: string) => void (await admin.command({ query })),
          select: async (query: string) => (await admin.query({ query, format: 'JSONEachRow' })).json<Record<string, unknown>>(),
        };
        for (const statement of [...dropAggregateStatements(options.database), ...aggregateStatements(options.database)]) await sql.command(statement);
        for (const batch of rounds.slice(-5).flat()) {
          if (batch.kind === 'outcomes') await clickhouse.recordOutcomes(batch.events);
          else await clickhouse.recordJobCloses(batch.events);
        }
        t.true(await ensureAggregates(sql, options.database), 'this call ran the backfill');
      } finally {
        await admin.close();
      }
      await compare('rebuilt');
    } finally {
      await clickhouse.close();
    }
  });
}
