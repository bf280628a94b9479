/**
 * The embedded `/usage` query. Whole UTC days of the window are read from
 * the daily cells (sqlite-usage-cells.ts); the partial days at either end
 * from the raw rows with their closes applied. Both are folded into the five
 * report dimensions in one statement, so its cost follows the days and the
 * partial days' rows, not the whole window's. Shared by the adapter
 * (in-memory databases) and its query thread (files).
 */
import type Database from 'better-sqlite3';
import { CLOSED_ERROR_STATUS, DAY_MS, P95, type DimKind, type DimRow } from './report.ts';

export interface UsageParams {
  accountId: string;
  scopeAll: 0 | 1;
  keyId: string | null;
  fromMs: number;
  toMs: number;
}

export interface UsageRows {
  rows: DimRow[];
  p95GenMs: number | null;
}

/**
 * Usage rows with their latest close applied: a queued job row takes the
 * result, audio, generation time and error of the close that counts (the
 * latest by time, then id). The one definition of "what a row counts as",
 * used by the query and by the daily cells' upkeep alike.
 */
export const effectiveRows = (where: string) => `
  SELECT e.account_id, COALESCE(e.key_id, '') AS key_id, e.at_ms, e.route, COALESCE(e.voice, '') AS voice, e.voice_name, e.engine,
    e.tokens_charged, e.characters,
    COALESCE(c.result, e.result) AS result,
    CASE WHEN c.id IS NULL THEN e.audio_seconds ELSE c.audio_seconds END AS audio_seconds,
    CASE WHEN c.id IS NULL THEN e.gen_ms ELSE c.gen_ms END AS gen_ms,
    COALESCE(CASE WHEN c.id IS NULL THEN e.error_code ELSE c.error_code END, '') AS error_code,
    CASE WHEN c.result = 'error' THEN ${CLOSED_ERROR_STATUS} ELSE e.status END AS status
  FROM usage_events e
  LEFT JOIN usage_job_closes c ON e.result = 'queued' AND e.job_id IS NOT NULL
    AND c.id = (SELECT id FROM usage_job_closes WHERE job_id = e.job_id ORDER BY at_ms DESC, id DESC LIMIT 1)
  WHERE ${where}`;

/**
 * Which parts of a window come from where (all times in ms, days as UTC day
 * numbers): raw rows of [headFrom, headTo); the cells of days [firstDay,
 * endDay); and the last, partial day tailDay. That day is read from its
 * cells less its rows after the window, [tailTo, tailDayEnd), when that
 * stretch (up to now) is shorter than the part inside the window, which it
 * nearly always is for a window ending now (`subtract`), as the ClickHouse
 * query does. Otherwise it is read whole from its cells when the account has
 * no row after the window that day, else from its raw rows [tailFrom, tailTo).
 * Reading the raw rows whenever a row lay after the window made every query
 * of a busy account read its whole day so far: under steady traffic the
 * requests answered while a query waited for the read thread lie after its
 * window, so the queries slowed as the day went on, and waited longer.
 */
export interface WindowPlan {
  headFrom: number;
  headTo: number;
  firstDay: number;
  endDay: number;
  tailDay: number;
  tailFrom: number;
  tailTo: number;
  tailDayEnd: number;
  /** 1: the tail day is its cells less the rows of [tailTo, tailDayEnd) */
  subtract: 0 | 1;
}

/** `cells: false` reads the whole window from the raw rows (the reference the tests compare with). */
export function planWindow(fromMs: number, toMs: number, cells = true, nowMs = Date.now()): WindowPlan {
  const rawOnly: WindowPlan = { headFrom: fromMs, headTo: toMs, firstDay: 0, endDay: 0, tailDay: -1, tailFrom: 0, tailTo: 0, tailDayEnd: 0, subtract: 0 };
  const first = Math.ceil(fromMs / DAY_MS);
  const end = Math.floor(toMs / DAY_MS);
  if (!cells || end < first) return rawOnly;
  const tail = toMs > end * DAY_MS;
  const dayEnd = (end + 1) * DAY_MS;
  const subtract = tail && Math.max(0, Math.min(dayEnd, nowMs) - toMs) < toMs - end * DAY_MS ? 1 : 0;
  return {
    headFrom: fromMs, headTo: first * DAY_MS, firstDay: first, endDay: end,
    tailDay: tail ? end : -1, tailFrom: tail ? end * DAY_MS : 0, tailTo: tail ? toMs : 0, tailDayEnd: tail ? dayEnd : 0, subtract,
  };
}

const SCOPE = '(@scopeAll = 1 OR e.key_id IS @keyId)';
const ROWS_AFTER_TAIL = `EXISTS (SELECT 1 FROM usage_events a WHERE a.account_id = @accountId AND a.at_ms >= @tailTo AND a.at_ms < @tailDayEnd)`;

// Raw rows of the partial days, and (sign -1) those after the window that its tail day's cells count;
// MATERIALIZED so the groupings below read them once. The tail's end is a constant subquery (read once,
// an index bound) rather than a condition the planner would test per row.
const RAW_ROWS = `raw AS MATERIALIZED (
  SELECT *, 1 AS sign FROM (${effectiveRows(`e.account_id = @accountId AND ${SCOPE} AND e.at_ms >= @headFrom AND e.at_ms < @headTo`)})
  UNION ALL
  SELECT *, 1 FROM (${effectiveRows(`e.account_id = @accountId AND ${SCOPE} AND e.at_ms >= @tailFrom
    AND e.at_ms < (CASE WHEN @subtract = 0 AND ${ROWS_AFTER_TAIL} THEN @tailTo ELSE @tailFrom END)`)})
  UNION ALL
  SELECT *, -1 FROM (${effectiveRows(`e.account_id = @accountId AND ${SCOPE} AND e.at_ms >= @tailTo
    AND e.at_ms < (CASE WHEN @subtract = 1 THEN @tailDayEnd ELSE @tailTo END)`)})
)`;

const CELL_DAYS = `account_id = @accountId AND (@scopeAll = 1 OR key_id = @cellKey)
  AND ((day >= @firstDay AND day < @endDay) OR (day = @tailDay AND (@subtract = 1 OR NOT ${ROWS_AFTER_TAIL})))`;

// A tail-day cell with a row after the window has a last time, and maybe names, from after it: they are
// set aside (stale), and the error and voice groups it touches read them again from the window's rows.
const CELLS = `cells AS MATERIALIZED (
  SELECT day, route, voice, error_code, status, requests, ok, queued, cache_hit, denied, error, token_cost, characters,
    audio_seconds, gen_count, gen_sum,
    CASE WHEN stale THEN 0 ELSE last_at_ms END AS last_at_ms, stale,
    CASE WHEN stale THEN NULL ELSE voice_name END AS voice_name, CASE WHEN stale THEN NULL ELSE engine END AS engine
  FROM (SELECT *, day = @tailDay AND last_at_ms >= @tailTo AS stale FROM usage_daily WHERE ${CELL_DAYS})
  UNION ALL
  SELECT at_ms / ${DAY_MS}, route, voice, error_code, status, sign, sign * (result = 'ok'), sign * (result = 'queued'),
    sign * (result = 'cache_hit'), sign * (result = 'denied'), sign * (result = 'error'), sign * tokens_charged,
    sign * characters, sign * audio_seconds, sign * (gen_ms IS NOT NULL), sign * COALESCE(gen_ms, 0),
    CASE WHEN sign > 0 THEN at_ms ELSE 0 END, 0, CASE WHEN sign > 0 THEN voice_name END, CASE WHEN sign > 0 THEN engine END
  FROM raw
)`;

const SUMS = `TOTAL(requests) AS requests, TOTAL(ok) AS ok, TOTAL(queued) AS queued, TOTAL(cache_hit) AS cache_hit,
  TOTAL(denied) AS denied, TOTAL(error) AS error, TOTAL(token_cost) AS token_cost, TOTAL(characters) AS characters,
  TOTAL(audio_seconds) AS audio_seconds, TOTAL(gen_count) AS gen_count, TOTAL(gen_sum) AS gen_sum,
  MAX(last_at_ms) AS last_at_ms, MAX(stale) AS stale, MAX(voice_name) AS voice_name, MAX(engine) AS engine`;

// A cell whose rows all moved to another cell counts nothing and must not show as a group.
const DIMENSIONS_SQL = `WITH ${RAW_ROWS}, ${CELLS}
SELECT 't' AS kind, '' AS k1, '' AS k2, ${SUMS} FROM cells
UNION ALL SELECT 'd', CAST(day AS TEXT), '', ${SUMS} FROM cells GROUP BY day HAVING TOTAL(requests) > 0
UNION ALL SELECT 'r', route, '', ${SUMS} FROM cells GROUP BY route HAVING TOTAL(requests) > 0
UNION ALL SELECT 'v', voice, '', ${SUMS} FROM cells GROUP BY voice HAVING TOTAL(requests) > 0
UNION ALL SELECT 'e', error_code, CAST(status AS TEXT), ${SUMS} FROM cells WHERE error_code <> '' GROUP BY error_code, status HAVING TOTAL(requests) > 0`;

// The generation time at position floor(P95 x n) of the sorted times (as report.ts's quantileIndex), counted in this one snapshot.
const P95_SQL = `WITH ${RAW_ROWS},
gens AS (
  SELECT gen_ms, TOTAL(n) AS n FROM (
    SELECT gen_ms, n FROM usage_gen_daily WHERE ${CELL_DAYS}
    UNION ALL SELECT gen_ms, sign FROM raw WHERE gen_ms IS NOT NULL
  ) GROUP BY gen_ms HAVING TOTAL(n) > 0
),
ranked AS (SELECT gen_ms, SUM(n) OVER (ORDER BY gen_ms ROWS UNBOUNDED PRECEDING) AS upto, SUM(n) OVER () AS total FROM gens)
SELECT gen_ms FROM ranked WHERE upto > MIN(CAST(${P95} * total AS INTEGER), total - 1) ORDER BY gen_ms LIMIT 1`;

// What a stale cell set aside, read from the window's rows of its tail day (rare: see CELLS): an error
// group's last time, a voice group's name and engine.
const TAIL_ROWS = effectiveRows(`e.account_id = @accountId AND ${SCOPE} AND e.at_ms >= @tailFrom AND e.at_ms < @tailTo`);
const ERROR_LAST_AT_SQL = `SELECT MAX(at_ms) FROM (${TAIL_ROWS}) WHERE error_code = @errorCode AND status = @status`;
const VOICE_NAMES_SQL = `SELECT MAX(voice_name) AS voice_name, MAX(engine) AS engine FROM (${TAIL_ROWS}) WHERE voice = @voice`;

interface RawDimRow {
  kind: DimKind; k1: string; k2: string; requests: number; ok: number; queued: number; cache_hit: number;
  denied: number; error: number; token_cost: number; characters: number; audio_seconds: number;
  gen_count: number; gen_sum: number; last_at_ms: number | null; stale: number | null; voice_name: string | null; engine: string | null;
}

function toDimRow(raw: RawDimRow): DimRow {
  return {
    kind: raw.kind, k1: raw.k1, k2: raw.k2, requests: raw.requests, ok: raw.ok, queued: raw.queued,
    cacheHit: raw.cache_hit, denied: raw.denied, error: raw.error, tokenCost: raw.token_cost,
    characters: raw.characters, audioSeconds: raw.audio_seconds, genCount: raw.gen_count, genSum: raw.gen_sum,
    lastAtMs: raw.last_at_ms ?? 0, voiceName: raw.voice_name, engine: raw.engine,
  };
}

/** The statements by name, for whichever connection runs them. */
export const USAGE_STATEMENTS = { dimensions: DIMENSIONS_SQL, p95: P95_SQL, errorLastAt: ERROR_LAST_AT_SQL, voiceNames: VOICE_NAMES_SQL };
export type UsageStatement = keyof typeof USAGE_STATEMENTS;

/** Runs a named statement: all rows, or the first column of the first row. */
export interface ReadRunner {
  all(name: UsageStatement, params: Record<string, unknown>): Promise<unknown[]>;
  value(name: UsageStatement, params: Record<string, unknown>): Promise<unknown>;
}

/** Runs the statements on this thread's connection (in-memory databases). */
export function inPlaceRunner(db: Database.Database): ReadRunner {
  const prepared = Object.fromEntries(Object.entries(USAGE_STATEMENTS).map(([name, sql]) => [name, db.prepare(sql)])) as Record<UsageStatement, Database.Statement>;
  return {
    async all(name, params) {
      return prepared[name].all(params);
    },
    async value(name, params) {
      return prepared[name].pluck().get(params);
    },
  };
}

export async function queryUsage(run: ReadRunner, params: UsageParams, options: { cells?: boolean } = {}): Promise<UsageRows> {
  const bound = { ...params, cellKey: params.keyId ?? '', ...planWindow(params.fromMs, params.toMs, options.cells ?? true) };
  const found = (await run.all('dimensions', bound)) as RawDimRow[];
  const rows = found.map(toDimRow);
  // MAX as SQL takes it: nulls ignored.
  const later = (a: string | null, b: string | null): string | null => (a === null ? b : b === null || a > b ? a : b);
  for (const [i, raw] of found.entries()) {
    if (!raw.stale) continue;
    const row = rows[i]!;
    if (raw.kind === 'e') {
      const lastAt = (await run.value('errorLastAt', { ...bound, errorCode: raw.k1, status: Number(raw.k2) })) as number | null;
      row.lastAtMs = Math.max(row.lastAtMs, lastAt ?? 0);
    } else if (raw.kind === 'v') {
      const [names] = (await run.all('voiceNames', { ...bound, voice: raw.k1 })) as Array<{ voice_name: string | null; engine: string | null }>;
      row.voiceName = later(row.voiceName, names?.voice_name ?? null);
      row.engine = later(row.engine, names?.engine ?? null);
    }
  }
  const genCount = rows.find((row) => row.kind === 't')?.genCount ?? 0;
  const p95GenMs = genCount > 0 ? ((await run.value('p95', bound)) as number | undefined) ?? null : null;
  return { rows, p95GenMs };
}
