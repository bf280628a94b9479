import type { UsageQuery } from '../../ports/analytics.ts';
import { sqlDateTime, sqlIdentifier, sqlNumber, sqlString } from './clickhouse-sql.ts';
import { TABLES } from './clickhouse-schema.ts';
import { AGG_TABLES, CELLS, genHistState } from './clickhouse-aggregates.ts';
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

/** Weighted rows folded into cells, in the same columns as the aggregate cells. */
function weightedCells(sources: string[]): string {
  const w = (condition: string) => `sum(w * (${condition}))`;
  return `SELECT cell.1 AS c_kind, if(cell.1 = 'd', toString(intDiv(at_ms, ${DAY_MS})), cell.2) AS c_k1, cell.3 AS c_k2,
    sum(w) AS requests, ${w("result = 'ok'")} AS ok, ${w("result = 'queued'")} AS queued, ${w("result = 'cache_hit'")} AS cache_hit,
    ${w("result = 'denied'")} AS denied, ${w("result = 'error'")} AS error, sum(w * tokens_charged) AS tok,
    sum(w * toInt64(characters)) AS chars, sum(w * audio_seconds) AS audio, ${w('isNotNull(gen_ms)')} AS gen_n,
    sum(w * ifNull(gen_ms, 0)) AS gen_sum, sum(w_retracted) AS retracted, max(if(own = 1, at_ms, toUInt64(0))) AS last_at,
    max(if(own = 1, voice_name, '')) AS vname, max(if(own = 1, engine, '')) AS eng, ${genHistState('w', "cell.1 = 'd'")} AS hist
  FROM (
    ${sources.join('\n    UNION ALL\n    ')}
  )
  ARRAY JOIN ${CELLS} AS cell
  GROUP BY c_kind, c_k1, c_k2`;
}

function aggregateCells(database: string, query: UsageQuery, [first, end]: [number, number]): string {
  return `SELECT kind AS c_kind, if(kind = 'd', toString(toUInt16(day)), k1) AS c_k1, k2 AS c_k2,
    sumMerge(n_requests) AS requests, sumMerge(n_ok) AS ok, sumMerge(n_queued) AS queued, sumMerge(n_cache_hit) AS cache_hit,
    sumMerge(n_denied) AS denied, sumMerge(n_error) AS error, sumMerge(s_tokens) AS tok, sumMerge(s_characters) AS chars,
    sumMerge(s_audio) AS audio, sumMerge(n_gen) AS gen_n, sumMerge(s_gen) AS gen_sum, sumMerge(n_retracted) AS retracted,
    maxMerge(last_at_ms) AS last_at, maxMerge(voice_name_max) AS vname, maxMerge(engine_max) AS eng, sumMapMergeState(gen_hist) AS hist
  FROM ${sqlIdentifier(database)}.${sqlIdentifier(AGG_TABLES.daily)}
  WHERE ${scopeFilter(query)} AND day >= ${dayLiteral(first)} AND day < ${dayLiteral(end)}
  GROUP BY c_kind, c_k1, c_k2`;
}

export function usageSql(database: string, query: UsageQuery, plan: UsagePlan): string {
  const sources = plan.raw.map((range) => rawRows(database, query, range));
  if (plan.days) sources.push(fixRows(database, query, plan.days));
  const parts = [
    ...(plan.days ? [aggregateCells(database, query, plan.days)] : []),
    ...(sources.length > 0 ? [weightedCells(sources)] : []),
  ];
  return `SELECT dim.1 AS kind, dim.2 AS k1, dim.3 AS k2,
  sum(requests) AS n_requests, sum(ok) AS n_ok, sum(queued) AS n_queued, sum(cache_hit) AS n_cache_hit, sum(denied) AS n_denied,
  sum(error) AS n_error, sum(tok) AS token_cost, sum(chars) AS n_characters, sum(audio) AS audio_seconds, sum(gen_n) AS gen_count,
  sum(gen_sum) AS gen_total, sum(retracted) AS n_retracted, max(last_at) AS last_at_ms, max(vname) AS voice_name, max(eng) AS engine,
  sumMapMergeIf(hist, dim.1 = 't') AS gen_hist
FROM (
  ${parts.join('\n  UNION ALL\n  ')}
)
ARRAY JOIN if(c_kind = 'd', [(c_kind, c_k1, c_k2), ('t', '', '')], [(c_kind, c_k1, c_k2)]) AS dim
GROUP BY dim
HAVING n_requests != 0`;
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
  /** generation times of the window as sorted values and their counts (totals row only) */
  genHist: [number[], number[]];
}

export function parseUsageRow(raw: Record<string, unknown>): UsageResultRow {
  const hist = (raw.gen_hist as [unknown[], unknown[]] | undefined) ?? [[], []];
  return {
    kind: raw.kind as DimKind, k1: String(raw.k1), k2: String(raw.k2),
    requests: num(raw.n_requests), ok: num(raw.n_ok), queued: num(raw.n_queued), cacheHit: num(raw.n_cache_hit),
    denied: num(raw.n_denied), error: num(raw.n_error), tokenCost: num(raw.token_cost), characters: num(raw.n_characters),
    audioSeconds: num(raw.audio_seconds), genCount: num(raw.gen_count), genSum: num(raw.gen_total),
    lastAtMs: num(raw.last_at_ms), voiceName: (raw.voice_name as string) || null, engine: (raw.engine as string) || null,
    retracted: num(raw.n_retracted), genHist: [hist[0].map(Number), hist[1].map(Number)],
  };
}

/** The value at position floor(0.95 x n) of the sorted generation times, from their value -> count histogram. */
export function histogramP95([values, counts]: [number[], number[]]): number | null {
  const total = counts.reduce((sum, n) => sum + Math.max(0, n), 0);
  if (total === 0) return null;
  const position = quantileIndex(total);
  let seen = 0;
  for (let i = 0; i < values.length; i++) {
    seen += Math.max(0, counts[i]!);
    if (seen > position) return values[i]!;
  }
  return null;
}
