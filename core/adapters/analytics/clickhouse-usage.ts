import type { UsageQuery } from '../../ports/analytics.ts';
import { sqlDateTime, sqlIdentifier, sqlNumber, sqlString } from './clickhouse-sql.ts';
import { TABLES } from './clickhouse-schema.ts';
import { AGG_TABLES, genHistFunction, genHistState, KINDS, MEASURES, P95_LEVELS, ROW_CELLS } from './clickhouse-aggregates.ts';
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
  /** UTC day numbers [first, end) answered by the aggregates */
  days: [number, number] | null;
  /** [from, to) ranges in ms answered by raw rows */
  raw: Array<[number, number]>;
}

export function usagePlan(fromMs: number, toMs: number, aggregates: boolean): UsagePlan | null {
  if (!(toMs > fromMs)) return null;
  const first = Math.ceil(fromMs / DAY_MS);
  const end = Math.floor(toMs / DAY_MS);
  if (!aggregates || end <= first) return { days: null, raw: slices(fromMs, toMs) };
  const raw: Array<[number, number]> = [];
  if (fromMs < first * DAY_MS) raw.push([fromMs, first * DAY_MS]);
  if (end * DAY_MS < toMs) raw.push([end * DAY_MS, toMs]);
  return { days: [first, end], raw };
}

const dayLiteral = (day: number) => `toDate(${sqlString(new Date(day * DAY_MS).toISOString().slice(0, 10))})`;

/** Row columns every weighted source gives: the usage row, its weight, its weight among retractions, and whether it is a row of its own. */
const ROW_COLUMNS = 'at_ms, route, voice, voice_name, engine, error_code, status, result, tokens_charged, characters, audio_seconds, gen_ms';

function scopeFilter(query: UsageQuery): string {
  const key = query.scope === 'key' ? ` AND key_id = ${sqlString(query.keyId ?? '')}` : '';
  return `account_id = ${sqlString(query.accountId)}${key}`;
}

function rawRows(database: string, query: UsageQuery, [fromMs, toMs]: [number, number]): string {
  // `at` bounds prune month partitions; at_ms bounds are the exact range [from, to).
  return `SELECT ${ROW_COLUMNS}, toInt64(1) AS w, toInt64(0) AS w_retracted, toUInt8(1) AS own
    FROM ${sqlIdentifier(database)}.${sqlIdentifier(TABLES.events)} FINAL
    WHERE ${scopeFilter(query)}
      AND at >= ${sqlDateTime(new Date(fromMs))} AND at <= ${sqlDateTime(new Date(toMs))}
      AND at_ms >= ${sqlNumber(fromMs)} AND at_ms < ${sqlNumber(toMs)}`;
}

/** The surplus copies of duplicated contributions, weighted to cancel them. */
function fixRows(database: string, query: UsageQuery, [first, end]: [number, number]): string {
  return `SELECT ${ROW_COLUMNS}, -toInt64(sign) * toInt64(copies - 1) AS w, if(sign < 0, -toInt64(copies - 1), toInt64(0)) AS w_retracted,
      toUInt8(0) AS own
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

/** The cells of whole days from each aggregate table; figures a table does not keep are zero there. */
function aggregateCells(database: string, query: UsageQuery, [first, end]: [number, number]): string[] {
  return KINDS.map(({ kind, table, k1, k2, measures, hist }) => {
    const kept = new Set<string>(measures);
    const values = MEASURES.map((m) => `${kept.has(m.name) ? `${m.fn}Merge(m_${m.name})` : zero(m.type)} AS ${m.name}`);
    return `SELECT ${sqlString(kind)} AS c_kind, ${k1} AS c_k1, ${k2} AS c_k2, ${values.join(', ')},
    ${hist ? `${genHistFunction('MergeState')}(m_gen_hist)` : EMPTY_HIST} AS hist
  FROM ${sqlIdentifier(database)}.${sqlIdentifier(table)}
  WHERE ${scopeFilter(query)} AND day >= ${dayLiteral(first)} AND day < ${dayLiteral(end)}
  GROUP BY c_kind, c_k1, c_k2`;
  });
}

const OUTER = MEASURES.map((m) => `${m.fn}(${m.name}) AS r_${m.name}`).join(', ');

export function usageSql(database: string, query: UsageQuery, plan: UsagePlan): string {
  const sources = plan.raw.map((range) => rawRows(database, query, range));
  if (plan.days) sources.push(fixRows(database, query, plan.days));
  const parts = [
    ...(plan.days ? aggregateCells(database, query, plan.days) : []),
    ...(sources.length > 0 ? [weightedCells(sources)] : []),
  ];
  // A (day, route) cell counts towards its day, its route and the totals.
  return `SELECT dim.1 AS kind, dim.2 AS k1, dim.3 AS k2, ${OUTER}, ${genHistFunction('MergeIf')}(hist, dim.1 = 't') AS gen_p95
FROM (
  ${parts.join('\n  UNION ALL\n  ')}
)
ARRAY JOIN if(c_kind = 'x', [('d', c_k1, ''), ('r', c_k2, ''), ('t', '', '')], [(c_kind, c_k1, c_k2)]) AS dim
GROUP BY dim
HAVING r_requests != 0`;
}

/** lastAt of error cells whose aggregate may still remember a retracted row: read from the raw rows of the window. */
export function lastAtSql(database: string, query: UsageQuery, cells: ReadonlyArray<{ code: string; status: number }>): string {
  const list = cells.map(({ code, status }) => `(${sqlString(code)}, ${sqlNumber(status)})`).join(', ');
  const from = query.from.getTime();
  const to = query.to.getTime();
  return `SELECT error_code AS l_code, status AS l_status, max(at_ms) AS l_at FROM ${sqlIdentifier(database)}.${sqlIdentifier(TABLES.events)} FINAL
    WHERE ${scopeFilter(query)} AND at >= ${sqlDateTime(new Date(from))} AND at <= ${sqlDateTime(new Date(to))}
      AND at_ms >= ${sqlNumber(from)} AND at_ms < ${sqlNumber(to)} AND (error_code, status) IN (${list})
    GROUP BY l_code, l_status`;
}

const num = (value: unknown): number => (value === null || value === undefined ? 0 : Number(value));

export interface UsageResultRow extends DimRow {
  retracted: number;
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
    retracted: num(raw.r_retracted), genAtLevels: ((raw.gen_p95 as unknown[] | undefined) ?? []).map(Number),
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
