import { sqlIdentifier } from './clickhouse-sql.ts';
import { EVENT_ROW_TYPES } from './clickhouse-schema.ts';
import type { RowBinaryType } from './clickhouse-rowbinary.ts';
import { DAY_MS } from './report.ts';

/**
 * The daily pre-aggregates behind `GET /usage`, in SQL that ClickHouse 18.16
 * and current releases both accept.
 *
 * Every figure is a sum of signed "contributions", each named by a
 * deterministic id (tid) and written into usage_agg_input, a Null table: its
 * materialized views fold the contributions into three AggregatingMergeTree
 * tables (per account, key and UTC day: by route, by voice, by error code)
 * and record every tid in usage_agg_ids. An outcome event contributes its
 * row once (`o:<id>`); a queued `POST /tts` row is moved to its latest close
 * by pairs of contributions (see clickhouse-contributions.ts). A redelivered
 * event, or a close that both consumers resolve, writes the same tid again:
 * the writer then finds the tid more than once in usage_agg_ids and records
 * the surplus in usage_daily_fixes (ReplacingMergeTree on the copy count),
 * which the query subtracts. So the figures are exact whatever is delivered
 * twice and whichever side of a job arrives first. Filling the tables from
 * the raw ones is in clickhouse-backfill.ts.
 */

export const AGG_TABLES = {
  input: 'usage_agg_input',
  /** per account, key, UTC day and route: byDay, byRoute, totals */
  routes: 'usage_daily_routes',
  /** per account, key and UTC day: the generation times behind p95GenMs (see P95_LEVELS) */
  gen: 'usage_daily_gen',
  /** per account, key, UTC day and voice: byVoice */
  voices: 'usage_daily_voices',
  /** per account, key, UTC day, error code and status (rows with a code only): byErrorCode */
  errors: 'usage_daily_errors',
  ids: 'usage_agg_ids',
  fixes: 'usage_daily_fixes',
  /** created once, by the process that runs the backfill; holds a row once the backfill has finished */
  backfill: 'usage_agg_backfill',
} as const;

export const VIEWS = { routes: 'usage_daily_routes_mv', gen: 'usage_daily_gen_mv', voices: 'usage_daily_voices_mv', errors: 'usage_daily_errors_mv', ids: 'usage_agg_ids_mv' } as const;

/** Columns of a fix row besides the tid and the copy count: what the report cells read from a row. */
export const FIX_EVENT_COLUMNS = [
  'at_ms', 'account_id', 'key_id', 'route', 'status', 'result', 'tokens_charged', 'characters', 'audio_seconds',
  'gen_ms', 'voice', 'voice_name', 'engine', 'error_code',
] as const;

const typeOf = new Map<string, RowBinaryType>(EVENT_ROW_TYPES.map(([name, type]) => [name, type]));
export const FIX_ROW_TYPES: ReadonlyArray<readonly [string, RowBinaryType]> = [
  ...FIX_EVENT_COLUMNS.map((name) => [name, typeOf.get(name)!] as const),
  ['tid', 'String'], ['sign', 'Int8'], ['copies', 'UInt64'],
];

/**
 * The figures of a report cell. `W` in a per-row value stands for the
 * row's signed weight: its sign in the views, sign x surplus copies in fixes.
 * Stored states are named `m_<name>`, apart from every source column: 18.16
 * would substitute an alias inside its own expression.
 */
export interface Measure {
  name: string;
  type: 'Int64' | 'Float64' | 'UInt64' | 'String';
  fn: 'sum' | 'max';
  /** per-row value in the views */
  view: string;
  /** per-row value in rows read from usage_events or usage_daily_fixes (columns w, w_stale, own, taken; cell) */
  row: string;
}

const weighted = (name: string, type: Measure['type'], value: string): Measure => ({
  name, type, fn: 'sum', view: value.replace(/\bW\b/g, 'toInt64(sign)'), row: value.replace(/\bW\b/g, 'w'),
});

export const MEASURES: Measure[] = [
  weighted('requests', 'Int64', 'W'),
  weighted('ok', 'Int64', "W * (result = 'ok')"),
  weighted('queued', 'Int64', "W * (result = 'queued')"),
  weighted('cache_hit', 'Int64', "W * (result = 'cache_hit')"),
  weighted('denied', 'Int64', "W * (result = 'denied')"),
  weighted('error', 'Int64', "W * (result = 'error')"),
  weighted('tok', 'Float64', 'W * tokens_charged'),
  weighted('chars', 'Int64', 'W * toInt64(characters)'),
  weighted('audio', 'Float64', 'W * audio_seconds'),
  weighted('gen_n', 'Int64', 'W * isNotNull(gen_ms)'),
  weighted('gen_sum', 'Float64', 'W * ifNull(gen_ms, 0)'),
  // Rows a max() below may still remember although they do not count: the query re-reads such cells. For error cells,
  // retractions (a close that lost to a later one); voice cells never, since every version of a job row has the queued
  // row's voice, name and engine. For both, rows taken away after the window (w_stale; taken = 1).
  { name: 'stale', type: 'Int64', fn: 'sum', view: 'toInt64(sign < 0)', row: "if(cell.1 = 'v', toInt64(taken), w_stale)" },
  { name: 'last_at', type: 'UInt64', fn: 'max', view: 'if(sign > 0, at_ms, toUInt64(0))', row: 'if(own = 1, at_ms, toUInt64(0))' },
  { name: 'vname', type: 'String', fn: 'max', view: "if(sign > 0, voice_name, '')", row: "if(own = 1, voice_name, '')" },
  { name: 'eng', type: 'String', fn: 'max', view: "if(sign > 0, engine, '')", row: "if(own = 1, engine, '')" },
];

/**
 * p95GenMs must stay SPEC's value at position floor(0.95 x n) of the window's
 * generation times. They are kept exactly, as a value -> count map per
 * account, key and day in a SummingMergeTree (usage_daily_gen: plain arrays,
 * cheap to read; the engine adds the counts of equal values). The values are
 * Float64 bit patterns as UInt64, which sort as the times do (times are
 * never negative), because 18.16 sums a map only under integer keys; it
 * reinterprets a number only through a string. The query feeds the window's
 * (value, count) pairs to quantilesExactWeighted at two levels, one of which
 * lands on that position whatever n is (see p95FromLevels). Counts are
 * signed and given to it as UInt64: the weights add modulo 2^64, so a
 * retraction (-1, that is 2^64 - 1) cancels its row exactly.
 */
export const P95_LEVELS = [0.95, 0.950000000001] as const;
export const genHistFunction = (combinator: 'State' | 'StateIf' | 'MergeIf') =>
  `quantilesExactWeighted${combinator}(${P95_LEVELS.join(', ')})`;
/** The generation times of rows that have one (and meet `when`), each with its weight. */
export const genHistState = (weight: string, when = '1') =>
  `${genHistFunction('StateIf')}(assumeNotNull(gen_ms), toUInt64(${weight}), ${when} AND isNotNull(gen_ms))`;
const genBits = `reinterpretAsUInt64(reinterpretAsString(assumeNotNull(gen_ms)))`;
export const timeFromBits = (column: string) => `reinterpretAsFloat64(reinterpretAsString(${column}))`;

/** UTC day of at_ms as a Date, independent of the server's time zone. */
export const UTC_DAY = `toDate(toUInt16(intDiv(at_ms, ${DAY_MS})))`;

/**
 * The aggregate tables, each fed by its own view (one GROUP BY over the
 * inserted rows each: cheaper than fanning every row out into cells). `kind`
 * names the report cell its rows become: x = (day, route), v = voice, e =
 * error code and status; k1/k2 read the cell's names from a stored row.
 * Generation times have their own table (see P95_LEVELS).
 */
export const KINDS = [
  {
    kind: 'x', table: AGG_TABLES.routes, view: VIEWS.routes, keys: [['route', 'String']], k1: 'toString(toUInt16(day))', k2: 'route',
    measures: ['requests', 'ok', 'queued', 'cache_hit', 'denied', 'error', 'tok', 'chars', 'audio', 'gen_n', 'gen_sum'], where: '',
  },
  {
    kind: 'v', table: AGG_TABLES.voices, view: VIEWS.voices, keys: [['voice', 'String']], k1: 'voice', k2: "''",
    measures: ['requests', 'error', 'tok', 'audio', 'gen_n', 'gen_sum', 'vname', 'eng'], where: '',
  },
  {
    kind: 'e', table: AGG_TABLES.errors, view: VIEWS.errors, keys: [['error_code', 'String'], ['status', 'UInt16']], k1: 'error_code',
    k2: 'toString(status)', measures: ['requests', 'stale', 'last_at'], where: "WHERE error_code != ''",
  },
] as const;

/** The same cells for rows read one by one (raw rows and fixes). */
export const ROW_CELLS = `arrayFilter(d -> d.1 != 'e' OR d.2 != '', [('x', toString(intDiv(at_ms, ${DAY_MS})), route), ('v', voice, ''), ('e', error_code, toString(status))])`;

export const measure = (name: string): Measure => MEASURES.find((m) => m.name === name)!;

/**
 * Rows per index mark of the daily tables: an account's window is a few
 * hundred rows per table, so small granules keep a query from decoding the
 * states of neighbouring accounts.
 */
const AGGREGATE_GRANULE = 256;

export function aggregateStatements(database: string): string[] {
  const db = sqlIdentifier(database);
  const t = (name: string) => `${db}.${sqlIdentifier(name)}`;
  const inputColumns = [
    ...EVENT_ROW_TYPES.map(([name, type]) => `${name} ${type}`), "tid String DEFAULT concat('o:', id)", 'sign Int8 DEFAULT 1',
  ].map((line) => `\n  ${line}`).join(',');
  const fixColumns = FIX_ROW_TYPES.map(([name, type]) => `\n  ${name} ${type}`).join(',');
  const aggregates = KINDS.flatMap(({ table, view, keys, measures, where }) => {
    const keyNames = ['account_id', 'key_id', 'day', ...keys.map(([name]) => name)];
    const states = measures.map((name) => `m_${name} AggregateFunction(${measure(name).fn}, ${measure(name).type})`);
    const values = measures.map((name) => `${measure(name).fn}State(${measure(name).view}) AS m_${name}`);
    return [
      `CREATE TABLE IF NOT EXISTS ${t(table)} (
  ${['account_id String', 'key_id String', 'day Date', ...keys.map(([name, type]) => `${name} ${type}`)].join(', ')},
  ${states.join(',\n  ')}
) ENGINE = AggregatingMergeTree PARTITION BY toYYYYMM(day) ORDER BY (${keyNames.join(', ')})
  SETTINGS index_granularity = ${AGGREGATE_GRANULE}`,
      `CREATE MATERIALIZED VIEW IF NOT EXISTS ${t(view)} TO ${t(table)} AS
SELECT ${['account_id', 'key_id', `${UTC_DAY} AS day`, ...keyNames.slice(3)].join(', ')},
  ${values.join(',\n  ')}
FROM ${t(AGG_TABLES.input)} ${where}
GROUP BY ${keyNames.join(', ')}`,
    ];
  });
  return [
    `CREATE TABLE IF NOT EXISTS ${t(AGG_TABLES.input)} (${inputColumns}
) ENGINE = Null`,
    // Ordered by account then time: the look-up after each write reads only its own accounts' recent rows (copies of a
    // contribution share its account and time), and groups the 8-byte tid_hash before the tids themselves decide.
    `CREATE TABLE IF NOT EXISTS ${t(AGG_TABLES.ids)} (
  account_id String, at_ms UInt64, at DateTime, tid_hash UInt64, tid String
) ENGINE = MergeTree PARTITION BY toYYYYMM(at) ORDER BY (account_id, at_ms, tid_hash)`,
    `CREATE TABLE IF NOT EXISTS ${t(AGG_TABLES.fixes)} (${fixColumns}
) ENGINE = ReplacingMergeTree(copies) ORDER BY (account_id, at_ms, tid)`,
    ...aggregates,
    `CREATE TABLE IF NOT EXISTS ${t(AGG_TABLES.gen)} (
  account_id String, key_id String, day Date, genMap Nested(bits UInt64, count Int64)
) ENGINE = SummingMergeTree PARTITION BY toYYYYMM(day) ORDER BY (account_id, key_id, day)
  SETTINGS index_granularity = ${AGGREGATE_GRANULE}`,
    `CREATE MATERIALIZED VIEW IF NOT EXISTS ${t(VIEWS.gen)} TO ${t(AGG_TABLES.gen)} AS
SELECT account_id, key_id, ${UTC_DAY} AS day,
  (sumMap(if(isNotNull(gen_ms), [${genBits}], emptyArrayUInt64()), if(isNotNull(gen_ms), [toInt64(sign)], emptyArrayInt64()))).1 AS \`genMap.bits\`,
  (sumMap(if(isNotNull(gen_ms), [${genBits}], emptyArrayUInt64()), if(isNotNull(gen_ms), [toInt64(sign)], emptyArrayInt64()))).2 AS \`genMap.count\`
FROM ${t(AGG_TABLES.input)}
GROUP BY account_id, key_id, day`,
    `CREATE MATERIALIZED VIEW IF NOT EXISTS ${t(VIEWS.ids)} TO ${t(AGG_TABLES.ids)} AS
SELECT account_id, at_ms, toDateTime(intDiv(at_ms, 1000)) AS at, cityHash64(tid) AS tid_hash, tid FROM ${t(AGG_TABLES.input)}`,
  ];
}
