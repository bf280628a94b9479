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
  /** per account, key, UTC day and route: byDay, byRoute, totals and the generation-time histogram */
  routes: 'usage_daily_routes',
  /** per account, key, UTC day and voice: byVoice */
  voices: 'usage_daily_voices',
  /** per account, key, UTC day, error code and status (rows with a code only): byErrorCode */
  errors: 'usage_daily_errors',
  ids: 'usage_agg_ids',
  fixes: 'usage_daily_fixes',
  /** created once, by the process that runs the backfill; holds a row once the backfill has finished */
  backfill: 'usage_agg_backfill',
} as const;

const VIEWS = { routes: 'usage_daily_routes_mv', voices: 'usage_daily_voices_mv', errors: 'usage_daily_errors_mv', ids: 'usage_agg_ids_mv' } as const;

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
  /** per-row value in rows read from usage_events or usage_daily_fixes (columns w, w_stale, own) */
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
  // Rows a max() below may still remember although they do not count (retractions): the query re-reads such cells.
  { name: 'stale', type: 'Int64', fn: 'sum', view: 'toInt64(sign < 0)', row: 'w_stale' },
  { name: 'last_at', type: 'UInt64', fn: 'max', view: 'if(sign > 0, at_ms, toUInt64(0))', row: 'if(own = 1, at_ms, toUInt64(0))' },
  { name: 'vname', type: 'String', fn: 'max', view: "if(sign > 0, voice_name, '')", row: "if(own = 1, voice_name, '')" },
  { name: 'eng', type: 'String', fn: 'max', view: "if(sign > 0, engine, '')", row: "if(own = 1, engine, '')" },
];

/**
 * Generation times as an exact value -> count map (quantilesExactWeighted:
 * a hash map, far cheaper to merge than sumMap), queried at two levels so
 * that one of them lands on SPEC's position floor(0.95 x n) whatever n is
 * (see p95FromLevels in clickhouse-usage.ts). Weights are signed counts
 * written as UInt64: the map adds them modulo 2^64, so a retraction (-1,
 * i.e. 2^64 - 1) cancels its row exactly.
 */
export const P95_LEVELS = [0.95, 0.950000000001] as const;
export const genHistFunction = (combinator: '' | 'State' | 'MergeState' | 'MergeIf') =>
  `quantilesExactWeighted${combinator}(${P95_LEVELS.join(', ')})`;
export const GEN_HIST_TYPE = `AggregateFunction(${genHistFunction('')}, Float64, UInt64)`;
/** A row's generation time with its weight (0 when it has none: a zero weight never decides a quantile). */
export const genHistState = (weight: string, when = '1') =>
  `${genHistFunction('State')}(ifNull(gen_ms, 0), toUInt64(if(${when} AND isNotNull(gen_ms), ${weight}, toInt64(0))))`;

/** UTC day of at_ms as a Date, independent of the server's time zone. */
export const UTC_DAY = `toDate(toUInt16(intDiv(at_ms, ${DAY_MS})))`;

/**
 * The three aggregate tables, each fed by its own view (one GROUP BY over the
 * inserted rows each: cheaper than fanning every row out into cells). `kind`
 * names the report cell its rows become: x = (day, route), v = voice, e =
 * error code and status; k1/k2 read the cell's names from a stored row.
 */
export const KINDS = [
  {
    kind: 'x', table: AGG_TABLES.routes, view: VIEWS.routes, keys: [['route', 'String']], k1: 'toString(toUInt16(day))', k2: 'route',
    measures: ['requests', 'ok', 'queued', 'cache_hit', 'denied', 'error', 'tok', 'chars', 'audio', 'gen_n', 'gen_sum'], hist: true, where: '',
  },
  {
    kind: 'v', table: AGG_TABLES.voices, view: VIEWS.voices, keys: [['voice', 'String']], k1: 'voice', k2: "''",
    measures: ['requests', 'error', 'tok', 'audio', 'gen_n', 'gen_sum', 'stale', 'vname', 'eng'], hist: false, where: '',
  },
  {
    kind: 'e', table: AGG_TABLES.errors, view: VIEWS.errors, keys: [['error_code', 'String'], ['status', 'UInt16']], k1: 'error_code',
    k2: 'toString(status)', measures: ['requests', 'stale', 'last_at'], hist: false, where: "WHERE error_code != ''",
  },
] as const;

/** The same cells for rows read one by one (raw rows and fixes). */
export const ROW_CELLS = `arrayFilter(d -> d.1 != 'e' OR d.2 != '', [('x', toString(intDiv(at_ms, ${DAY_MS})), route), ('v', voice, ''), ('e', error_code, toString(status))])`;

export const measure = (name: string): Measure => MEASURES.find((m) => m.name === name)!;

export function aggregateStatements(database: string): string[] {
  const db = sqlIdentifier(database);
  const t = (name: string) => `${db}.${sqlIdentifier(name)}`;
  const inputColumns = [
    ...EVENT_ROW_TYPES.map(([name, type]) => `${name} ${type}`), "tid String DEFAULT concat('o:', id)", 'sign Int8 DEFAULT 1',
  ].map((line) => `\n  ${line}`).join(',');
  const fixColumns = FIX_ROW_TYPES.map(([name, type]) => `\n  ${name} ${type}`).join(',');
  const aggregates = KINDS.flatMap(({ table, view, keys, measures, hist, where }) => {
    const keyNames = keys.map(([name]) => name);
    const states = [
      ...measures.map((name) => `m_${name} AggregateFunction(${measure(name).fn}, ${measure(name).type})`),
      ...(hist ? [`m_gen_hist ${GEN_HIST_TYPE}`] : []),
    ];
    const values = [
      ...measures.map((name) => `${measure(name).fn}State(${measure(name).view}) AS m_${name}`),
      ...(hist ? [`${genHistState('toInt64(sign)')} AS m_gen_hist`] : []),
    ];
    return [
      `CREATE TABLE IF NOT EXISTS ${t(table)} (
  account_id String, key_id String, day Date, ${keys.map(([name, type]) => `${name} ${type}`).join(', ')},
  ${states.join(',\n  ')}
) ENGINE = AggregatingMergeTree PARTITION BY toYYYYMM(day) ORDER BY (account_id, key_id, day, ${keyNames.join(', ')})`,
      `CREATE MATERIALIZED VIEW IF NOT EXISTS ${t(view)} TO ${t(table)} AS
SELECT account_id, key_id, ${UTC_DAY} AS day, ${keyNames.join(', ')},
  ${values.join(',\n  ')}
FROM ${t(AGG_TABLES.input)} ${where}
GROUP BY account_id, key_id, day, ${keyNames.join(', ')}`,
    ];
  });
  return [
    `CREATE TABLE IF NOT EXISTS ${t(AGG_TABLES.input)} (${inputColumns}
) ENGINE = Null`,
    `CREATE TABLE IF NOT EXISTS ${t(AGG_TABLES.ids)} (
  at_ms UInt64, at DateTime, tid String
) ENGINE = MergeTree PARTITION BY toYYYYMM(at) ORDER BY (at_ms, tid)`,
    `CREATE TABLE IF NOT EXISTS ${t(AGG_TABLES.fixes)} (${fixColumns}
) ENGINE = ReplacingMergeTree(copies) ORDER BY (account_id, at_ms, tid)`,
    ...aggregates,
    `CREATE MATERIALIZED VIEW IF NOT EXISTS ${t(VIEWS.ids)} TO ${t(AGG_TABLES.ids)} AS
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
  return [...Object.values(VIEWS), ...Object.values(AGG_TABLES)].map((name) => `DROP TABLE IF EXISTS ${t(name)}`);
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
  ) AS queued_rows ALL INNER JOIN (
    SELECT job_id, argMax((${CLOSE_FIELDS.join(', ')}), (at_ms, id)) AS c_latest FROM ${t(TABLES.closes)} GROUP BY job_id
  ) AS latest_closes USING job_id
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
SELECT ${FIX_EVENT_COLUMNS.join(', ')}, b_tid, b_sign, b_copies
FROM (${backfillSelect(database)}) AS contributions ANY INNER JOIN (${duplicateTids}) AS duplicated USING b_tid`,
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
