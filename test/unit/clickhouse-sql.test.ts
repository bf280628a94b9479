import test from 'ava';
import { spawnSync } from 'node:child_process';
import { createClient } from '@clickhouse/client';
import { sqlDateTime, sqlIdentifier, sqlNumber, sqlString, sqlStringList } from '../../core/adapters/analytics/clickhouse-sql.ts';

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

/** ava needs every test declared synchronously, so the probe runs in a child process. */
function reachable(url: string): boolean {
  const probe = `fetch(${JSON.stringify(url)}, { signal: AbortSignal.timeout(2000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))`;
  return spawnSync(process.execPath, ['-e', probe], { timeout: 5000 }).status === 0;
}

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
