import type { UsageReport, UsageTotals } from '../../ports/analytics.ts';
import { isoTimeMs } from '../../iso-time.ts';

/**
 * Both analytics adapters aggregate in their database down to "dimension
 * rows" of the same shape and leave naming, ordering, averaging and rounding
 * to this module, so the two cannot drift apart on what a field means.
 */

/** `t` totals, `d` day (k1 = UTC day number), `r` route, `v` voice, `e` error code (k2 = status). */
export type DimKind = 't' | 'd' | 'r' | 'v' | 'e';

export interface DimRow {
  kind: DimKind;
  k1: string;
  k2: string;
  requests: number;
  ok: number;
  queued: number;
  cacheHit: number;
  denied: number;
  error: number;
  tokenCost: number;
  characters: number;
  audioSeconds: number;
  genCount: number;
  genSum: number;
  lastAtMs: number;
  voiceName: string | null;
  engine: string | null;
}

export const DAY_MS = 86_400_000;
export const P95 = 0.95;
const MAX_VOICES = 100;

/** ClickHouse's quantileExact position (floor(level * n)); the SQLite adapter reads the same row. */
export function quantileIndex(count: number, level = P95): number {
  return Math.min(Math.floor(level * count), count - 1);
}

const round = (value: number, digits: number): number => {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
};

// Float sums are added in a different order by each database; rounding hides that noise.
const tokens = (v: number) => round(v, 6);
const seconds = (v: number) => round(v, 3);
const avgGen = (row: DimRow): number | null => (row.genCount > 0 ? round(row.genSum / row.genCount, 1) : null);

function dayLabel(dayNumber: string): string {
  return new Date(Number(dayNumber) * DAY_MS).toISOString().slice(0, 10);
}

function emptyTotals(): UsageTotals {
  return {
    requests: 0, ok: 0, queued: 0, cacheHit: 0, denied: 0, error: 0,
    tokenCost: 0, characters: 0, audioSeconds: 0, avgGenMs: null, p95GenMs: null,
  };
}

const byRequestsThen = <T extends { requests: number }>(name: (row: T) => string) =>
  (a: T, b: T) => b.requests - a.requests || name(a).localeCompare(name(b));

export function buildReport(rows: DimRow[], p95GenMs: number | null): UsageReport {
  const of = (kind: DimKind) => rows.filter((row) => row.kind === kind);
  const total = of('t')[0];
  const totals = total && total.requests > 0
    ? {
        requests: total.requests, ok: total.ok, queued: total.queued, cacheHit: total.cacheHit,
        denied: total.denied, error: total.error, tokenCost: tokens(total.tokenCost),
        characters: total.characters, audioSeconds: seconds(total.audioSeconds),
        avgGenMs: avgGen(total), p95GenMs: total.genCount > 0 ? p95GenMs : null,
      }
    : emptyTotals();

  const byDay = of('d')
    .map((row) => ({
      day: dayLabel(row.k1), requests: row.requests, ok: row.ok, denied: row.denied, error: row.error,
      tokenCost: tokens(row.tokenCost), characters: row.characters, audioSeconds: seconds(row.audioSeconds),
      avgGenMs: avgGen(row),
    }))
    .sort((a, b) => a.day.localeCompare(b.day));

  const byRoute = of('r')
    .map((row) => ({
      route: row.k1, requests: row.requests, ok: row.ok, denied: row.denied, error: row.error,
      tokenCost: tokens(row.tokenCost), avgGenMs: avgGen(row),
    }))
    .sort(byRequestsThen((row) => row.route));

  const byVoice = of('v')
    .filter((row) => row.k1 !== '')
    .map((row) => ({
      voice: row.k1, voiceName: row.voiceName || null, engine: row.engine || null, requests: row.requests,
      tokenCost: tokens(row.tokenCost), audioSeconds: seconds(row.audioSeconds), avgGenMs: avgGen(row),
      errors: row.error,
    }))
    .sort(byRequestsThen((row) => row.voice))
    .slice(0, MAX_VOICES);

  const byErrorCode = of('e')
    .filter((row) => row.k1 !== '')
    .map((row) => ({
      errorCode: row.k1, statusCode: Number(row.k2), count: row.requests,
      lastAt: new Date(row.lastAtMs).toISOString(),
    }))
    .sort((a, b) => b.count - a.count || a.errorCode.localeCompare(b.errorCode) || a.statusCode - b.statusCode);

  return { totals, byDay, byRoute, byVoice, byErrorCode };
}

export function eventTimeMs(iso: string, what: string): number {
  const ms = isoTimeMs(iso);
  if (!Number.isFinite(ms)) throw new TypeError(`${what}: unparseable time ${JSON.stringify(iso)}`);
  return ms;
}

/** The status a queued job row reports once its job has failed: the job failed server-side. */
export const CLOSED_ERROR_STATUS = 500;
