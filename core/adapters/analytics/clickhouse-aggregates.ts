import { sqlIdentifier } from './clickhouse-sql.ts';
import { EVENT_ROW_COLUMNS, EVENT_ROW_TYPES, TABLES } from './clickhouse-schema.ts';
import type { RowBinaryType } from './clickhouse-rowbinary.ts';
import { CLOSED_ERROR_STATUS, DAY_MS } from './report.ts';

/**
 * The daily pre-aggregates behind `GET /usage`, in SQL that ClickHouse 18.16
 * and current releases both accept.
 *
 * Every figure is a sum of signed "contributions", each named by a
 * deterministic id (tid) and written into usage_agg_input, a Null table: its
 * materialized views fold the contributions into usage_daily (one
 * AggregatingMergeTree row per account, key, UTC day and report cell) and
 * record every tid in usage_agg_ids. An outcome event contributes its row
 * once (`o:<id>`); a queued `POST /tts` row is moved to its latest close by
 * pairs of contributions (see clickhouse-contributions.ts). A redelivered
 * event, or a close that both consumers resolve, writes the same tid again:
 * the writer then finds the tid more than once in usage_agg_ids and records
 * the surplus in usage_daily_fixes (ReplacingMergeTree on the copy count),
 * which the query subtracts. So the figures are exact whatever is delivered
 * twice and whichever side of a job arrives first.
 */

export const AGG_TABLES = {
  input: 'usage_agg_input',
  daily: 'usage_daily',
  dailyView: 'usage_daily_mv',
  ids: 'usage_agg_ids',
  idsView: 'usage_agg_ids_mv',
  fixes: 'usage_daily_fixes',
  /** created once, by the process that runs the backfill; holds a row once the backfill has finished */
  backfill: 'usage_agg_backfill',
} as const;

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

/** The report cells a row falls into: day, route, voice, and error code with status (only rows with a code). */
export const CELLS = `arrayFilter(d -> d.1 != 'e' OR d.2 != '', [('d', '', ''), ('r', route, ''), ('v', voice, ''), ('e', error_code, toString(status))])`;

const SUM_STATES: ReadonlyArray<readonly [string, string, string]> = [
  // [column, type, per-row value of a contribution with sign `sign`]
  ['n_requests', 'Int64', 'toInt64(sign)'],
  ['n_ok', 'Int64', "toInt64(sign) * (result = 'ok')"],
  ['n_queued', 'Int64', "toInt64(sign) * (result = 'queued')"],
  ['n_cache_hit', 'Int64', "toInt64(sign) * (result = 'cache_hit')"],
  ['n_denied', 'Int64', "toInt64(sign) * (result = 'denied')"],
  ['n_error', 'Int64', "toInt64(sign) * (result = 'error')"],
  ['s_tokens', 'Float64', 'sign * tokens_charged'],
  ['s_characters', 'Int64', 'toInt64(sign) * toInt64(characters)'],
  ['s_audio', 'Float64', 'sign * audio_seconds'],
  ['n_gen', 'Int64', 'toInt64(sign) * isNotNull(gen_ms)'],
  ['s_gen', 'Float64', 'sign * ifNull(gen_ms, 0)'],
  // Retractions in the cell: max() below cannot forget a retracted row, so the query re-reads lastAt when this is > 0.
  ['n_retracted', 'Int64', 'toInt64(sign < 0)'],
];
const MAX_STATES: ReadonlyArray<readonly [string, string, string]> = [
  ['last_at_ms', 'UInt64', 'if(sign > 0, at_ms, toUInt64(0))'],
  ['voice_name_max', 'String', "if(sign > 0, voice_name, '')"],
  ['engine_max', 'String', "if(sign > 0, engine, '')"],
];
/** Generation times of day cells as value -> count: merged over a window it gives the exact p95. */
const GEN_HIST_TYPE = 'AggregateFunction(sumMap, Array(Float64), Array(Int64))';
export const genHistState = (weight: string, when: string) =>
  `sumMapState(if(${when} AND isNotNull(gen_ms), [assumeNotNull(gen_ms)], emptyArrayFloat64()), if(${when} AND isNotNull(gen_ms), [${weight}], emptyArrayInt64()))`;

/** UTC day of at_ms as a Date, independent of the server's time zone. */
export const UTC_DAY = `toDate(toUInt16(intDiv(at_ms, ${DAY_MS})))`;

export function aggregateStatements(database: string): string[] {
  const db = sqlIdentifier(database);
  const t = (name: string) => `${db}.${sqlIdentifier(name)}`;
  const inputColumns = [
    ...EVENT_ROW_TYPES.map(([name, type]) => `${name} ${type}`), "tid String DEFAULT concat('o:', id)", 'sign Int8 DEFAULT 1',
  ].map((line) => `\n  ${line}`).join(',');
  const states = [
    ...SUM_STATES.map(([name, type]) => `${name} AggregateFunction(sum, ${type})`),
    ...MAX_STATES.map(([name, type]) => `${name} AggregateFunction(max, ${type})`),
    `gen_hist ${GEN_HIST_TYPE}`,
  ];
  const fixColumns = FIX_ROW_TYPES.map(([name, type]) => `\n  ${name} ${type}`).join(',');
  return [
    `CREATE TABLE IF NOT EXISTS ${t(AGG_TABLES.input)} (${inputColumns}
) ENGINE = Null`,
    `CREATE TABLE IF NOT EXISTS ${t(AGG_TABLES.daily)} (
  account_id String, key_id String, day Date, kind String, k1 String, k2 String,
  ${states.join(',\n  ')}
) ENGINE = AggregatingMergeTree PARTITION BY toYYYYMM(day) ORDER BY (account_id, key_id, day, kind, k1, k2)`,
    `CREATE TABLE IF NOT EXISTS ${t(AGG_TABLES.ids)} (
  at_ms UInt64, at DateTime, tid String
) ENGINE = MergeTree PARTITION BY toYYYYMM(at) ORDER BY (at_ms, tid)`,
    `CREATE TABLE IF NOT EXISTS ${t(AGG_TABLES.fixes)} (${fixColumns}
) ENGINE = ReplacingMergeTree(copies) ORDER BY (account_id, at_ms, tid)`,
    // Target columns are named apart from source columns: 18.16 would substitute an alias inside its own expression.
    `CREATE MATERIALIZED VIEW IF NOT EXISTS ${t(AGG_TABLES.dailyView)} TO ${t(AGG_TABLES.daily)} AS
SELECT account_id, key_id, ${UTC_DAY} AS day, cell.1 AS kind, cell.2 AS k1, cell.3 AS k2,
  ${SUM_STATES.map(([name, , value]) => `sumState(${value}) AS ${name}`).join(',\n  ')},
  ${MAX_STATES.map(([name, , value]) => `maxState(${value}) AS ${name}`).join(',\n  ')},
  ${genHistState('toInt64(sign)', "cell.1 = 'd'")} AS gen_hist
FROM ${t(AGG_TABLES.input)}
ARRAY JOIN ${CELLS} AS cell
GROUP BY account_id, key_id, day, kind, k1, k2`,
    `CREATE MATERIALIZED VIEW IF NOT EXISTS ${t(AGG_TABLES.idsView)} TO ${t(AGG_TABLES.ids)} AS
SELECT at_ms, toDateTime(intDiv(at_ms, 1000)) AS at, tid FROM ${t(AGG_TABLES.input)}`,
  ];
}

/** Creating this table without IF NOT EXISTS elects the one process that backfills. */
export function backfillMarkerStatement(database: string): string {
  return `CREATE TABLE ${sqlIdentifier(database)}.${sqlIdentifier(AGG_TABLES.backfill)} (finished_at DateTime) ENGINE = TinyLog`;
}

/** Everything aggregate, views first; dropping these and restarting rebuilds the aggregates from the raw tables. */
export function dropAggregateStatements(database: string): string[] {
  const t = (name: string) => `${sqlIdentifier(database)}.${sqlIdentifier(name)}`;
  return [AGG_TABLES.dailyView, AGG_TABLES.idsView, AGG_TABLES.input, AGG_TABLES.daily, AGG_TABLES.ids, AGG_TABLES.fixes, AGG_TABLES.backfill]
    .map((name) => `DROP TABLE IF EXISTS ${t(name)}`);
}

/**
 * The contributions the live write path would have made for what the raw
 * tables hold, with the same tids: every outcome row that is not a job row
 * (usage_events), every queued job row (usage_jobs), and each job's move
 * to its latest close (usage_job_closes). Superseded closes are left out:
 * their contributions cancel, and a writer that meets them later writes
 * both halves of the pair.
 */
export function backfillSelect(database: string): string {
  const t = (name: string) => `${sqlIdentifier(database)}.${sqlIdentifier(name)}`;
  const cols = EVENT_ROW_COLUMNS.join(', ');
  const plain = `SELECT ${cols}, concat('o:', id) AS b_tid, toInt8(1) AS b_sign FROM ${t(TABLES.events)} FINAL
  WHERE NOT (version > 0 OR (result = 'queued' AND job_id != ''))`;
  const queued = `SELECT ${cols}, concat('o:', id) AS b_tid, toInt8(1) AS b_sign FROM ${t(TABLES.jobs)} FINAL`;
  // The closed version of a queued row, as closedVersion() in clickhouse-schema.ts writes it.
  // The latest close is read as one tuple: argMax over a Nullable column alone would skip the NULLs.
  const CLOSE_FIELDS = ['id', 'at_ms', 'result', 'audio_seconds', 'gen_ms', 'tokens_refunded', 'error_code'];
  const c = (name: string) => `c_latest.${CLOSE_FIELDS.indexOf(name) + 1}`;
  const closed: Record<string, string> = {
    version: `greatest(toUInt64(1), ${c('at_ms')})`, result: c('result'),
    status: `if(${c('result')} = 'error', toUInt16(${CLOSED_ERROR_STATUS}), q_status)`, audio_seconds: c('audio_seconds'),
    gen_ms: c('gen_ms'), error_code: c('error_code'), tokens_refunded: `q_tokens_refunded + ${c('tokens_refunded')}`,
  };
  const pick = EVENT_ROW_COLUMNS.map((name) => (closed[name] ? `if(s = 1, ${closed[name]}, q_${name})` : `q_${name}`)).join(',\n    ');
  const moves = `SELECT ${pick},
    concat(if(s = 1, 'a+:', 'a-:'), toString(length(q_id)), ':', q_id, ':', ${c('id')}) AS b_tid, toInt8(s) AS b_sign
  FROM (
    SELECT ${EVENT_ROW_COLUMNS.filter((name) => name !== 'job_id').map((name) => `${name} AS q_${name}`).join(', ')}, job_id, job_id AS q_job_id
    FROM ${t(TABLES.jobs)} FINAL
  ) ALL INNER JOIN (
    SELECT job_id, argMax((${CLOSE_FIELDS.join(', ')}), (at_ms, id)) AS c_latest FROM ${t(TABLES.closes)} GROUP BY job_id
  ) USING job_id
  ARRAY JOIN [1, -1] AS s`;
  return `${plain}\nUNION ALL\n${queued}\nUNION ALL\n${moves}`;
}

export function backfillStatements(database: string): { insert: string; duplicates: string; fixes: string; finished: string } {
  const t = (name: string) => `${sqlIdentifier(database)}.${sqlIdentifier(name)}`;
  const inputColumns = [...EVENT_ROW_COLUMNS, 'tid', 'sign'].map(sqlIdentifier).join(', ');
  const duplicateTids = `SELECT tid AS b_tid, count() AS b_copies FROM ${t(AGG_TABLES.ids)} GROUP BY tid HAVING b_copies > 1`;
  return {
    insert: `INSERT INTO ${t(AGG_TABLES.input)} (${inputColumns}) ${backfillSelect(database)}`,
    duplicates: `SELECT count() AS n FROM (${duplicateTids})`,
    // Tids that live writers also wrote while the backfill ran: the surplus is recorded like theirs.
    fixes: `INSERT INTO ${t(AGG_TABLES.fixes)} (${FIX_ROW_TYPES.map(([name]) => sqlIdentifier(name)).join(', ')})
SELECT ${FIX_EVENT_COLUMNS.join(', ')}, b_tid, b_sign, b_copies FROM (${backfillSelect(database)}) ANY INNER JOIN (${duplicateTids}) USING b_tid`,
    finished: `INSERT INTO ${t(AGG_TABLES.backfill)} (finished_at) VALUES (now())`,
  };
}

/** What setting up the aggregates needs from a client. */
export interface SqlRunner {
  command(query: string): Promise<void>;
  select(query: string): Promise<Record<string, unknown>[]>;
}

const TABLE_ALREADY_EXISTS = '57';

/** The server's error code: the client parses it from current releases' messages only, 18.16 writes `Code: 57, ...`. */
function serverErrorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' || typeof code === 'number') return String(code);
  return /\bCode: (\d+)/.exec(error instanceof Error ? error.message : String(error))?.[1];
}

/**
 * Creates the aggregate tables and views if they are missing, then elects
 * one process (the one whose CREATE of the marker table succeeds) to fill
 * them from the raw tables. Other processes write live contributions at
 * once; a tid both write is a duplicate like any other, and the backfill
 * records those it finds. A failed backfill drops the aggregates again so
 * that the next start-up begins afresh. Answers whether this call backfilled.
 */
export async function ensureAggregates(sql: SqlRunner, database: string): Promise<boolean> {
  for (const statement of aggregateStatements(database)) await sql.command(statement);
  try {
    await sql.command(backfillMarkerStatement(database));
  } catch (error) {
    if (serverErrorCode(error) === TABLE_ALREADY_EXISTS) return false;
    throw error;
  }
  const steps = backfillStatements(database);
  try {
    await sql.command(steps.insert);
    const duplicates = Number((await sql.select(steps.duplicates))[0]?.n ?? 0);
    if (duplicates > 0) await sql.command(steps.fixes);
    await sql.command(steps.finished);
  } catch (error) {
    for (const statement of dropAggregateStatements(database)) await sql.command(statement).catch(() => undefined);
    throw error;
  }
  return true;
}

/** True once a backfill has finished: until then `usage()` reads the raw rows only. */
export async function aggregatesReady(sql: SqlRunner, database: string): Promise<boolean> {
  try {
    const rows = await sql.select(`SELECT count() AS n FROM ${sqlIdentifier(database)}.${sqlIdentifier(AGG_TABLES.backfill)}`);
    return Number(rows[0]?.n ?? 0) > 0;
  } catch {
    return false;
  }
}

/** Drops and rebuilds the aggregates from the raw tables (the bench loads raw rows directly, then calls this). */
export async function rebuildAggregates(sql: SqlRunner, database: string): Promise<void> {
  for (const statement of dropAggregateStatements(database)) await sql.command(statement);
  await ensureAggregates(sql, database);
}
