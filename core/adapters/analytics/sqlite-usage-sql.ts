/**
 * The embedded `/usage` query: one pass over the account's rows of the
 * window, grouped five ways, and the p95 of generation time. Shared by the
 * adapter (in-memory databases) and its query thread (files).
 */
import type Database from 'better-sqlite3';
import { CLOSED_ERROR_STATUS, DAY_MS, quantileIndex, type DimKind, type DimRow } from './report.ts';

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

// Rows of the window with closes applied; MATERIALIZED so the five groupings below read it once.
const EFFECTIVE_ROWS = `
WITH eff AS MATERIALIZED (
  SELECT e.at_ms, e.route, COALESCE(e.voice, '') AS voice, e.voice_name, e.engine, e.tokens_charged, e.characters,
    COALESCE(c.result, e.result) AS result,
    CASE WHEN c.id IS NULL THEN e.audio_seconds ELSE c.audio_seconds END AS audio_seconds,
    CASE WHEN c.id IS NULL THEN e.gen_ms ELSE c.gen_ms END AS gen_ms,
    COALESCE(CASE WHEN c.id IS NULL THEN e.error_code ELSE c.error_code END, '') AS error_code,
    CASE WHEN c.result = 'error' THEN ${CLOSED_ERROR_STATUS} ELSE e.status END AS status
  FROM usage_events e
  LEFT JOIN usage_job_closes c ON e.result = 'queued' AND e.job_id IS NOT NULL
    AND c.id = (SELECT id FROM usage_job_closes WHERE job_id = e.job_id ORDER BY at_ms DESC, id DESC LIMIT 1)
  WHERE e.account_id = @accountId AND (@scopeAll = 1 OR e.key_id IS @keyId)
    AND e.at_ms >= @fromMs AND e.at_ms < @toMs
)`;

const AGGREGATES = `COUNT(*) AS requests,
  TOTAL(result = 'ok') AS ok, TOTAL(result = 'queued') AS queued, TOTAL(result = 'cache_hit') AS cache_hit,
  TOTAL(result = 'denied') AS denied, TOTAL(result = 'error') AS error,
  TOTAL(tokens_charged) AS token_cost, TOTAL(characters) AS characters, TOTAL(audio_seconds) AS audio_seconds,
  COUNT(gen_ms) AS gen_count, TOTAL(gen_ms) AS gen_sum, MAX(at_ms) AS last_at_ms,
  MAX(voice_name) AS voice_name, MAX(engine) AS engine`;

const DIMENSIONS_SQL = `${EFFECTIVE_ROWS}
SELECT 't' AS kind, '' AS k1, '' AS k2, ${AGGREGATES} FROM eff
UNION ALL SELECT 'd', CAST(at_ms / ${DAY_MS} AS TEXT), '', ${AGGREGATES} FROM eff GROUP BY at_ms / ${DAY_MS}
UNION ALL SELECT 'r', route, '', ${AGGREGATES} FROM eff GROUP BY route
UNION ALL SELECT 'v', voice, '', ${AGGREGATES} FROM eff GROUP BY voice
UNION ALL SELECT 'e', error_code, CAST(status AS TEXT), ${AGGREGATES} FROM eff WHERE error_code <> '' GROUP BY error_code, status`;

const P95_SQL = `${EFFECTIVE_ROWS}
SELECT gen_ms FROM eff WHERE gen_ms IS NOT NULL ORDER BY gen_ms LIMIT 1 OFFSET @offset`;

interface RawDimRow {
  kind: DimKind; k1: string; k2: string; requests: number; ok: number; queued: number; cache_hit: number;
  denied: number; error: number; token_cost: number; characters: number; audio_seconds: number;
  gen_count: number; gen_sum: number; last_at_ms: number | null; voice_name: string | null; engine: string | null;
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
export const USAGE_STATEMENTS = { dimensions: DIMENSIONS_SQL, p95: P95_SQL };
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

export async function queryUsage(run: ReadRunner, params: UsageParams): Promise<UsageRows> {
  const rows = ((await run.all('dimensions', { ...params })) as RawDimRow[]).map(toDimRow);
  const genCount = rows.find((row) => row.kind === 't')?.genCount ?? 0;
  const p95GenMs = genCount > 0 ? ((await run.value('p95', { ...params, offset: quantileIndex(genCount) })) as number) : null;
  return { rows, p95GenMs };
}
