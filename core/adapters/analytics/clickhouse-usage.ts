import type { UsageQuery } from '../../ports/analytics.ts';
import { sqlDateTime, sqlIdentifier, sqlNumber, sqlString } from './clickhouse-sql.ts';
import { TABLES } from './clickhouse-schema.ts';
import { AGG_TABLES, genHistFunction, genHistState, KINDS, MEASURES, P95_LEVELS, ROW_CELLS, timeFromBits } from './clickhouse-aggregates.ts';
import { DAY_MS, quantileIndex, type DimKind, type DimRow } from './report.ts';

/**
 * The `usage()` query. Whole UTC days of the window come from the daily
 * aggregates (less the recorded surplus of duplicated contributions); the
 * partial days at either end come from the raw rows, deduplicated with
 * FINAL. Both are folded into the five report dimensions in one statement,
 * so the answer is a few hundred rows whatever the window holds. Until the
 * aggregates are backfilled, the whole window is read from the raw rows.
 */

/**
 * FINAL runs on one thread in ClickHouse 18.16; a raw window is cut into
 * slices read as UNION ALL branches so the dedupe uses every core. A row and
 * its duplicates share at_ms, so they always fall in the same slice.
 */
const MAX_SLICES = 4;

function slices(fromMs: number, toMs: number): Array<[number, number]> {
  const span = toMs - fromMs;
  const count = Math.max(1, Math.min(MAX_SLICES, Math.floor(span / DAY_MS)));
  const bounds = Array.from({ length: count + 1 }, (_, i) => (i === count ? toMs : fromMs + Math.floor((span * i) / count)));
  return bounds.slice(0, -1).map((start, i) => [start, bounds[i + 1]!]);
}

export interface UsagePlan {
  /** UTC day numbers [first, end) read from the aggregates */
  days: [number, number] | null;
  /** [from, to) ranges in ms of raw rows added */
  add: Array<[number, number]>;
  /** [from, to) ranges in ms of raw rows taken away again: the rest of the last day, after the window */
  subtract: Array<[number, number]>;
}

/** Partial days longer than this are read as two FINAL slices, one per core. */
const SPLIT_MS = 3 * 3_600_000;
const halves = ([a, b]: [number, number]): Array<[number, number]> =>
  (b - a > SPLIT_MS ? [[a, a + Math.floor((b - a) / 2)], [a + Math.floor((b - a) / 2), b]] : [[a, b]]);

/**
 * Which days come from the aggregates and which rows from usage_events.
 * The last partial day is read as its whole-day aggregate less the rows
 * after the window when those are fewer than the rows inside it, which they
 * nearly always are for a window ending now: nothing lies in the future.
 */
export function usagePlan(fromMs: number, toMs: number, aggregates: boolean, nowMs = Date.now()): UsagePlan | null {
  if (!(toMs > fromMs)) return null;
  let first = Math.ceil(fromMs / DAY_MS);
  let end = Math.floor(toMs / DAY_MS);
  if (!aggregates || end <= first) return { days: null, add: slices(fromMs, toMs), subtract: [] };
  const add: Array<[number, number]> = [];
  const subtract: Array<[number, number]> = [];
  if (fromMs < first * DAY_MS) add.push(...halves([fromMs, first * DAY_MS]));
  if (end * DAY_MS < toMs) {
    const dayEnd = (end + 1) * DAY_MS;
    const after = Math.max(0, Math.min(dayEnd, nowMs) - toMs);
    if (after < toMs - end * DAY_MS) {
      subtract.push([toMs, dayEnd]);
      end += 1;
    } else {
      add.push(...halves([end * DAY_MS, toMs]));
    }
  }
  return { days: [first, end], add, subtract };
}

const dayLiteral = (day: number) => `toDate(${sqlString(new Date(day * DAY_MS).toISOString().slice(0, 10))})`;

/**
 * Columns of every row source: the usage row, then its weight w, w_stale
 * (how far it leaves a max() of its error cell unsure: retractions, rows
 * taken away after the window), own (whether its own time and names count)
 * and taken (a row taken away after the window).
 */
const ROW_COLUMNS = 'at_ms, route, voice, voice_name, engine, error_code, status, result, tokens_charged, characters, audio_seconds, gen_ms';

function scopeFilter(query: UsageQuery): string {
  const key = query.scope === 'key' ? ` AND key_id = ${sqlString(query.keyId ?? '')}` : '';
  return `account_id = ${sqlString(query.accountId)}${key}`;
}

function rawRows(database: string, query: UsageQuery, [fromMs, toMs]: [number, number], taken = false): string {
  // `at` bounds prune month partitions; at_ms bounds are the exact range [from, to).
  const weights = taken
    ? 'toInt64(-1) AS w, toInt64(1) AS w_stale, toUInt8(0) AS own, toUInt8(1) AS taken'
    : 'toInt64(1) AS w, toInt64(0) AS w_stale, toUInt8(1) AS own, toUInt8(0) AS taken';
  return `SELECT ${ROW_COLUMNS}, ${weights}
    FROM ${sqlIdentifier(database)}.${sqlIdentifier(TABLES.events)} FINAL
    WHERE ${scopeFilter(query)}
      AND at >= ${sqlDateTime(new Date(fromMs))} AND at <= ${sqlDateTime(new Date(toMs))}
      AND at_ms >= ${sqlNumber(fromMs)} AND at_ms < ${sqlNumber(toMs)}`;
}

/** The surplus copies of duplicated contributions, weighted to cancel them. */
function fixRows(database: string, query: UsageQuery, [first, end]: [number, number]): string {
  return `SELECT ${ROW_COLUMNS}, -toInt64(sign) * toInt64(copies - 1) AS w, if(sign < 0, -toInt64(copies - 1), toInt64(0)) AS w_stale,
      toUInt8(0) AS own, toUInt8(0) AS taken
    FROM ${sqlIdentifier(database)}.${sqlIdentifier(AGG_TABLES.fixes)} FINAL
    WHERE ${scopeFilter(query)} AND at_ms >= ${sqlNumber(first * DAY_MS)} AND at_ms < ${sqlNumber(end * DAY_MS)}`;
}

const zero = (type: string) => (type === 'String' ? "''" : `to${type}(0)`);
const EMPTY_HIST = `${genHistFunction('State')}(toFloat64(0), toUInt64(0))`;

/** Weighted rows folded into the cells the aggregate tables hold, in the same columns. */
function weightedCells(sources: string[]): string {
  return `SELECT cell.1 AS c_kind, cell.2 AS c_k1, cell.3 AS c_k2,
    ${MEASURES.map((m) => `${m.fn}(${m.row}) AS ${m.name}`).join(', ')}, ${genHistState('w', "cell.1 = 'x'")} AS hist
  FROM (
    ${sources.join('\n    UNION ALL\n    ')}
  )
  ARRAY JOIN ${ROW_CELLS} AS cell
  GROUP BY c_kind, c_k1, c_k2`;
}

const zeros = (kept: ReadonlySet<string>) => MEASURES.map((m) => `${kept.has(m.name) ? `${m.fn}Merge(m_${m.name})` : zero(m.type)} AS ${m.name}`);

/** The cells of whole days from each aggregate table; figures a table does not keep are zero there. */
function aggregateCells(database: string, query: UsageQuery, [first, end]: [number, number]): string[] {
  const days = `${scopeFilter(query)} AND day >= ${dayLiteral(first)} AND day < ${dayLiteral(end)}`;
  const cells = KINDS.map(({ kind, table, k1, k2, measures }) => `SELECT ${sqlString(kind)} AS c_kind, ${k1} AS c_k1, ${k2} AS c_k2,
    ${zeros(new Set<string>(measures)).join(', ')}, ${EMPTY_HIST} AS hist
  FROM ${sqlIdentifier(database)}.${sqlIdentifier(table)}
  WHERE ${days}
  GROUP BY c_kind, c_k1, c_k2`);
  // Generation times: the (time, count) pairs of the window's value -> count maps, counted towards the totals only.
  const gen = `SELECT 'g' AS c_kind, '' AS c_k1, '' AS c_k2, ${zeros(new Set()).join(', ')},
    ${genHistFunction('State')}(${timeFromBits('g_bits')}, toUInt64(g_count)) AS hist
  FROM ${sqlIdentifier(database)}.${sqlIdentifier(AGG_TABLES.gen)}
  ARRAY JOIN genMap.bits AS g_bits, genMap.count AS g_count
  WHERE ${days}
  GROUP BY c_kind, c_k1, c_k2`;
  return [...cells, gen];
}

const OUTER = MEASURES.map((m) => `${m.fn}(${m.name}) AS r_${m.name}`).join(', ');

export function usageSql(database: string, query: UsageQuery, plan: UsagePlan): string {
  const sources = [
    ...plan.add.map((range) => rawRows(database, query, range)),
    ...plan.subtract.map((range) => rawRows(database, query, range, true)),
  ];
  if (plan.days) sources.push(fixRows(database, query, plan.days));
  const parts = [
    ...(plan.days ? aggregateCells(database, query, plan.days) : []),
    ...(sources.length > 0 ? [weightedCells(sources)] : []),
  ];
  // A (day, route) cell counts towards its day, its route and the totals; generation times only towards the totals.
  return `SELECT dim.1 AS kind, dim.2 AS k1, dim.3 AS k2, ${OUTER}, ${genHistFunction('MergeIf')}(hist, dim.1 = 't') AS gen_p95
FROM (
  ${parts.join('\n  UNION ALL\n  ')}
)
ARRAY JOIN multiIf(c_kind = 'x', [('d', c_k1, ''), ('r', c_k2, ''), ('t', '', '')], c_kind = 'g', [('t', '', '')], [(c_kind, c_k1, c_k2)]) AS dim
GROUP BY dim
HAVING r_requests != 0`;
}

/**
 * The max() fields of cells the aggregates may have filled from rows that
 * do not count (`stale` > 0: a retracted close, a row after the window),
 * read again from the raw rows of the window: lastAt of error cells, the
 * names of voice cells. Rare: it needs a job closed twice or rows after `to`.
 */
export function staleCellsSql(database: string, query: UsageQuery, errors: ReadonlyArray<{ code: string; status: number }>, voices: readonly string[]): string {
  const from = query.from.getTime();
  const to = query.to.getTime();
  const rows = `FROM ${sqlIdentifier(database)}.${sqlIdentifier(TABLES.events)} FINAL
    WHERE ${scopeFilter(query)} AND at >= ${sqlDateTime(new Date(from))} AND at <= ${sqlDateTime(new Date(to))}
      AND at_ms >= ${sqlNumber(from)} AND at_ms < ${sqlNumber(to)}`;
  const errorCells = errors.map(({ code, status }) => `(${sqlString(code)}, ${sqlNumber(status)})`).join(', ');
  return [
    ...(errors.length > 0 ? [`SELECT 'e' AS s_kind, error_code AS s_k1, toString(status) AS s_k2, max(at_ms) AS s_last_at, '' AS s_vname, '' AS s_eng
    ${rows} AND (error_code, status) IN (${errorCells}) GROUP BY s_k1, s_k2`] : []),
    ...(voices.length > 0 ? [`SELECT 'v' AS s_kind, voice AS s_k1, '' AS s_k2, toUInt64(0) AS s_last_at, max(voice_name) AS s_vname, max(engine) AS s_eng
    ${rows} AND voice IN (${voices.map(sqlString).join(', ')}) GROUP BY s_k1`] : []),
  ].join('\nUNION ALL\n');
}

const num = (value: unknown): number => (value === null || value === undefined ? 0 : Number(value));

export interface UsageResultRow extends DimRow {
  stale: number;
  /** generation time at each of P95_LEVELS (totals row only) */
  genAtLevels: number[];
}

export function parseUsageRow(raw: Record<string, unknown>): UsageResultRow {
  return {
    kind: raw.kind as DimKind, k1: String(raw.k1), k2: String(raw.k2),
    requests: num(raw.r_requests), ok: num(raw.r_ok), queued: num(raw.r_queued), cacheHit: num(raw.r_cache_hit),
    denied: num(raw.r_denied), error: num(raw.r_error), tokenCost: num(raw.r_tok), characters: num(raw.r_chars),
    audioSeconds: num(raw.r_audio), genCount: num(raw.r_gen_n), genSum: num(raw.r_gen_sum),
    lastAtMs: num(raw.r_last_at), voiceName: (raw.r_vname as string) || null, engine: (raw.r_eng as string) || null,
    stale: num(raw.r_stale), genAtLevels: ((raw.gen_p95 as unknown[] | undefined) ?? []).map(Number),
  };
}

/**
 * SPEC's p95 is the value at position floor(0.95 x n) of the sorted times;
 * quantileExactWeighted(level) answers the smallest value whose running
 * count reaches ceil(n x level). 0.95 gives that position unless 0.95 x n
 * is whole (n a multiple of 20), where the slightly higher level does.
 * Both thresholds are computed here in the same double arithmetic.
 */
export function p95FromLevels(count: number, values: readonly number[]): number | null {
  if (count <= 0) return null;
  const rank = quantileIndex(count) + 1;
  const level = P95_LEVELS.findIndex((l) => Math.ceil(count * l) === rank);
  if (level < 0 || values[level] === undefined) throw new Error(`p95: no stored level reaches rank ${rank} of ${count}`);
  return values[level]!;
}
