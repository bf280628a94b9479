import test from 'ava';
import { createClient } from '@clickhouse/client';
import { sqlDateTime, sqlIdentifier, sqlNumber, sqlString, sqlStringList } from '../../core/adapters/analytics/clickhouse-sql.ts';
import { p95FromLevels, usagePlan } from '../../core/adapters/analytics/clickhouse-usage.ts';
import { closeContributions, latestClose, timeRanges } from '../../core/adapters/analytics/clickhouse-contributions.ts';
import type { CloseRow, EventRow } from '../../core/adapters/analytics/clickhouse-schema.ts';
import { P95_LEVELS } from '../../core/adapters/analytics/clickhouse-aggregates.ts';
import { quantileIndex } from '../../core/adapters/analytics/report.ts';
import { reachable } from '../helpers/reachable.ts';

test('sqlString quotes plain text', (t) => {
  t.is(sqlString('abc'), "'abc'");
  t.is(sqlString(''), "''");
});

test('sqlString escapes quotes and backslashes so a literal cannot be closed early', (t) => {
  t.is(sqlString("it's"), "'it\\'s'");
  t.is(sqlString('a\\b'), "'a\\\\b'");
  t.is(sqlString("\\'"), "'\\\\\\''");
  t.is(sqlString("x' OR 1=1 --"), "'x\\' OR 1=1 --'");
  t.is(sqlString("'); DROP DATABASE default; --"), "'\\'); DROP DATABASE default; --'");
});

test('sqlString escapes newlines, tabs, NUL and other control characters', (t) => {
  t.is(sqlString('a\nb\rc\td'), "'a\\nb\\rc\\td'");
  t.is(sqlString('nul\0end'), "'nul\\0end'");
  t.is(sqlString('\u0001\u001f\u007f'), "'\\x01\\x1f\\x7f'");
  t.false(/[\u0000-\u001f]/.test(sqlString('\u0000\u0007\n\u001b')));
});

test('sqlString passes unicode through untouched', (t) => {
  t.is(sqlString('Tiếng Việt – giọng nữ 🎙'), "'Tiếng Việt – giọng nữ 🎙'");
});

test('sqlString refuses non-strings', (t) => {
  t.throws(() => sqlString(42 as unknown as string), { instanceOf: TypeError });
});

test('sqlIdentifier backquotes names and escapes backquotes and backslashes', (t) => {
  t.is(sqlIdentifier('usage_events'), '`usage_events`');
  t.is(sqlIdentifier('we`ird'), '`we\\`ird`');
  t.is(sqlIdentifier('back\\slash'), '`back\\\\slash`');
  t.is(sqlIdentifier('a\nb'), '`a\\nb`');
  t.throws(() => sqlIdentifier(''), { instanceOf: TypeError });
  t.throws(() => sqlIdentifier('a\0b'), { instanceOf: TypeError });
});

test('sqlNumber writes finite numbers and bigints, refuses NaN and infinities', (t) => {
  t.is(sqlNumber(42), '42');
  t.is(sqlNumber(-1.5), '-1.5');
  t.is(sqlNumber(1772323200123), '1772323200123');
  t.is(sqlNumber(1e-7), '1e-7');
  t.is(sqlNumber(12345678901234567890n), '12345678901234567890');
  t.throws(() => sqlNumber(Number.NaN), { instanceOf: TypeError });
  t.throws(() => sqlNumber(Number.POSITIVE_INFINITY), { instanceOf: TypeError });
  t.throws(() => sqlNumber('1; DROP TABLE x' as unknown as number), { instanceOf: TypeError });
});

test('sqlDateTime writes unix seconds, rounded down, independent of the server time zone', (t) => {
  t.is(sqlDateTime(new Date('2026-03-01T00:00:00.999Z')), 'toDateTime(1772323200)');
  t.throws(() => sqlDateTime(new Date('not a date')), { instanceOf: TypeError });
  t.throws(() => sqlDateTime(new Date('1969-12-31T23:59:59Z')), { instanceOf: RangeError });
});

test('sqlStringList joins literals and refuses an empty list (IN () is invalid SQL)', (t) => {
  t.is(sqlStringList(['a', "b'c"]), "'a', 'b\\'c'");
  t.throws(() => sqlStringList([]), { instanceOf: RangeError });
});

test('p95FromLevels picks the stored level that reaches position floor(0.95 x n) for every n', (t) => {
  for (let n = 1; n <= 5000; n++) {
    const rank = quantileIndex(n) + 1;
    const reaching = P95_LEVELS.map((level) => Math.ceil(n * level) === rank);
    t.true(reaching.some(Boolean), `n = ${n}`);
    t.is(p95FromLevels(n, [10, 20]), reaching[0] ? 10 : 20, `n = ${n}`);
  }
  for (const n of [20, 40, 1_000_000, 999_999_980]) t.is(p95FromLevels(n, [1, 2]), 2, `${n} is a multiple of 20`);
  for (const n of [19, 21, 1_000_001]) t.is(p95FromLevels(n, [1, 2]), 1);
  t.is(p95FromLevels(0, []), null);
});

test('usagePlan reads whole UTC days from the aggregates and the partial days at either end from raw rows', (t) => {
  const at = (iso: string) => Date.parse(iso);
  const later = at('2027-01-01T00:00:00Z');
  t.deepEqual(usagePlan(at('2026-03-01T00:00:00Z'), at('2026-03-03T00:00:00Z'), true, later), { days: [20513, 20515], add: [], subtract: [] });
  // Vietnamese midnight (UTC+7) to midnight: 7 hours of the first UTC day (two slices), and of the last day 17 hours
  // inside against 7 after: that day is read whole from the aggregates less its rows after the window.
  t.deepEqual(usagePlan(at('2026-02-28T17:00:00Z'), at('2026-03-02T17:00:00Z'), true, later), {
    days: [20513, 20515],
    add: [[at('2026-02-28T17:00:00Z'), at('2026-02-28T20:30:00Z')], [at('2026-02-28T20:30:00Z'), at('2026-03-01T00:00:00Z')]],
    subtract: [[at('2026-03-02T17:00:00Z'), at('2026-03-03T00:00:00Z')]],
  });
  // A window ending now: whatever part of today is left lies in the future, so today comes from the aggregates.
  t.deepEqual(usagePlan(at('2026-03-01T00:00:00Z'), at('2026-03-02T01:00:00Z'), true, at('2026-03-02T01:00:00Z')), {
    days: [20513, 20515], add: [], subtract: [[at('2026-03-02T01:00:00Z'), at('2026-03-03T00:00:00Z')]],
  });
  t.deepEqual(usagePlan(at('2026-03-01T00:00:00Z'), at('2026-03-02T01:00:00Z'), true, later), {
    days: [20513, 20514], add: [[at('2026-03-02T00:00:00Z'), at('2026-03-02T01:00:00Z')]], subtract: [],
  });
  t.is(usagePlan(at('2026-03-01T01:00:00Z'), at('2026-03-01T23:00:00Z'), true, later)!.days, null, 'no whole day: raw rows only');
  t.is(usagePlan(at('2026-03-01T00:00:00Z'), at('2026-03-03T00:00:00Z'), false, later)!.days, null, 'before the backfill: raw rows only');
  t.is(usagePlan(5, 5, true, later), null);
});

test('timeRanges groups event times into ranges without gaps over a minute', (t) => {
  t.deepEqual(timeRanges([5_000, 1_000, 61_000, 200_000, 3_000]), [[1_000, 61_000], [200_000, 200_000]]);
  t.deepEqual(timeRanges([]), []);
});

test('a queued row moves to its latest close: the contributions of every close sum to that close alone', (t) => {
  const queued = { id: 'q', at_ms: 10, result: 'queued', status: 202, audio_seconds: 0, gen_ms: null, error_code: '', tokens_refunded: 0 } as unknown as EventRow;
  const close = (id: string, at: number, result: string): CloseRow => ({
    id, job_id: 'j', at_ms: at, result, audio_seconds: 1, gen_ms: 5, tokens_refunded: 0, error_code: result === 'error' ? 'synthesis_failed' : '',
  });
  const closes = [close('c1', 20, 'error'), close('c2', 30, 'ok'), close('c0', 15, 'error')];
  t.is(latestClose(closes)!.id, 'c2');
  const moves = closeContributions(queued, closes);
  t.is(new Set(moves.map((m) => m.tid)).size, moves.length, 'every tid is distinct');
  const net = new Map<string, number>();
  for (const m of [{ row: queued, sign: 1 }, ...moves]) net.set(m.row.result, (net.get(m.row.result) ?? 0) + m.sign);
  t.deepEqual(Object.fromEntries([...net].filter(([, n]) => n !== 0)), { ok: 1 });
  t.deepEqual(closeContributions(queued, []), []);
  // Ties on time go to the greater id, as ClickHouse's argMax over (at_ms, id) and SQLite's ORDER BY at_ms DESC, id DESC.
  t.is(latestClose([close('b', 5, 'ok'), close('a', 5, 'ok')])!.id, 'b');
});

const clickhouseUrl = process.env.CLICKHOUSE_URL ?? 'http://127.0.0.1:8123';
if (reachable(new URL('/ping', clickhouseUrl).href)) {
  const client = createClient({ url: clickhouseUrl, username: process.env.CLICKHOUSE_USER ?? 'default', password: process.env.CLICKHOUSE_PASSWORD ?? '' });
  const one = async (query: string) => (await (await client.query({ query, format: 'JSONEachRow' })).json<Record<string, unknown>>())[0]!;
  test.after.always(() => client.close());

  const nasty = [
    "it's", 'a\\b', "\\'", "x' OR 1=1 --", "'); DROP DATABASE default; --", '\\x41 is not A', '\\0 stays text',
    String.fromCharCode(...Array.from({ length: 32 }, (_, i) => i), 127), 'Tiếng Việt 🎙 – “quotes”', '`backquote`',
  ];
  test('ClickHouse reads back every escaped string exactly', async (t) => {
    for (const value of nasty) t.is((await one(`SELECT ${sqlString(value)} AS s`)).s, value, JSON.stringify(value));
  });

  test('ClickHouse reads back numbers and date-times exactly', async (t) => {
    for (const value of [0, 42, -1.5, 1e-7, 1772323200123, 0.1 + 0.2]) t.is(Number((await one(`SELECT ${sqlNumber(value)} AS n`)).n), value);
    const row = await one(`SELECT toUnixTimestamp(${sqlDateTime(new Date('2026-03-01T12:34:56.789Z'))}) AS s`);
    t.is(Number(row.s), 1772368496);
  });

  test('ClickHouse creates and finds a table whose name needs escaping', async (t) => {
    const database = `sql_helper_test_${process.pid}_${Date.now()}`;
    const name = "we`ird \\ na'me\n";
    await client.command({ query: `CREATE DATABASE ${sqlIdentifier(database)}` });
    try {
      await client.command({ query: `CREATE TABLE ${sqlIdentifier(database)}.${sqlIdentifier(name)} (x UInt8) ENGINE = Memory` });
      const row = await one(`SELECT name FROM system.tables WHERE database = ${sqlString(database)}`);
      t.is(row.name, name);
    } finally {
      await client.command({ query: `DROP DATABASE IF EXISTS ${sqlIdentifier(database)}` });
    }
  });
} else {
  console.log(`clickhouse-sql: ClickHouse not reachable at ${clickhouseUrl}; skipping the round-trip tests`);
}
