import type { UsageQuery } from '../../ports/analytics.ts';
import { sqlDateTime, sqlIdentifier, sqlNumber, sqlString } from './clickhouse-sql.ts';
import { TABLES } from './clickhouse-schema.ts';
import { DAY_MS, P95, type DimKind, type DimRow } from './report.ts';

/**
 * The `usage()` query: one statement that dedupes (FINAL), aggregates the
 * window into cells (day x route x voice x error code x status) and folds the
 * cells into the five report dimensions with ARRAY JOIN, so the answer is a
 * few hundred rows whatever the window holds.
 */

/**
 * FINAL runs on one thread in ClickHouse 18.16; the window is cut into
 * slices read as UNION ALL branches so the dedupe uses every core. A row and
 * its duplicates share at_ms, so they always fall in the same slice.
 */
const MAX_SLICES = 4;
const MIN_SLICE_MS = DAY_MS;

function slices(fromMs: number, toMs: number): Array<[number, number]> {
  const span = toMs - fromMs;
  const count = Math.max(1, Math.min(MAX_SLICES, Math.floor(span / MIN_SLICE_MS)));
  const bounds = Array.from({ length: count + 1 }, (_, i) => (i === count ? toMs : fromMs + Math.floor((span * i) / count)));
  return bounds.slice(0, -1).map((start, i) => [start, bounds[i + 1]!]);
}

function windowRows(database: string, query: UsageQuery, fromMs: number, toMs: number): string {
  const table = `${sqlIdentifier(database)}.${sqlIdentifier(TABLES.events)}`;
  const keyFilter = query.scope === 'key' ? ` AND key_id = ${sqlString(query.keyId ?? '')}` : '';
  // `at` bounds prune month partitions; at_ms bounds are the exact window [from, to).
  return `SELECT at_ms, route, voice, voice_name, engine, tokens_charged, characters, result, audio_seconds, gen_ms, error_code, status
    FROM ${table} FINAL
    WHERE account_id = ${sqlString(query.accountId)}${keyFilter}
      AND at >= ${sqlDateTime(new Date(fromMs))} AND at <= ${sqlDateTime(new Date(toMs))}
      AND at_ms >= ${sqlNumber(fromMs)} AND at_ms < ${sqlNumber(toMs)}`;
}

export function usageSql(database: string, query: UsageQuery): string | null {
  const fromMs = query.from.getTime();
  const toMs = query.to.getTime();
  if (!(toMs > fromMs)) return null;
  const branches = slices(fromMs, toMs).map(([a, b]) => windowRows(database, query, a, b)).join('\n    UNION ALL\n    ');
  return `SELECT dim.1 AS kind, dim.2 AS k1, dim.3 AS k2,
  sum(n) AS requests, sum(n_ok) AS ok, sum(n_queued) AS queued, sum(n_cache) AS cache_hit,
  sum(n_denied) AS denied, sum(n_error) AS error, sum(tok) AS token_cost, sum(chars) AS characters,
  sum(audio) AS audio_seconds, sum(gen_n) AS gen_count, sum(gen_sum) AS gen_total, max(last_at) AS last_at_ms,
  max(vname) AS voice_name, max(eng) AS engine,
  quantileExactMergeIf(${P95})(gen_q, dim.1 = 't') AS p95
FROM (
  SELECT intDiv(at_ms, ${DAY_MS}) AS day, route, voice, error_code, status,
    count() AS n, sum(result = 'ok') AS n_ok, sum(result = 'queued') AS n_queued, sum(result = 'cache_hit') AS n_cache,
    sum(result = 'denied') AS n_denied, sum(result = 'error') AS n_error,
    sum(tokens_charged) AS tok, sum(characters) AS chars, sum(audio_seconds) AS audio,
    count(gen_ms) AS gen_n, sum(ifNull(gen_ms, 0)) AS gen_sum, quantileExactState(${P95})(gen_ms) AS gen_q,
    max(at_ms) AS last_at, max(voice_name) AS vname, max(engine) AS eng
  FROM (
    ${branches}
  )
  GROUP BY day, route, voice, error_code, status
)
ARRAY JOIN [('t', '', ''), ('d', toString(day), ''), ('r', route, ''), ('v', voice, ''), ('e', error_code, toString(status))] AS dim
GROUP BY dim`;
}

const num = (value: unknown): number => (value === null || value === undefined ? 0 : Number(value));

export interface UsageResultRow extends DimRow {
  p95: number | null;
}

export function parseUsageRow(raw: Record<string, unknown>): UsageResultRow {
  return {
    kind: raw.kind as DimKind, k1: String(raw.k1), k2: String(raw.k2),
    requests: num(raw.requests), ok: num(raw.ok), queued: num(raw.queued), cacheHit: num(raw.cache_hit),
    denied: num(raw.denied), error: num(raw.error), tokenCost: num(raw.token_cost), characters: num(raw.characters),
    audioSeconds: num(raw.audio_seconds), genCount: num(raw.gen_count), genSum: num(raw.gen_total),
    lastAtMs: num(raw.last_at_ms), voiceName: (raw.voice_name as string) || null, engine: (raw.engine as string) || null,
    p95: raw.p95 === null || raw.p95 === undefined ? null : Number(raw.p95),
  };
}
