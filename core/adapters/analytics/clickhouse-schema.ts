import type { JobCloseEvent, OutcomeEvent } from '../../ports/analytics.ts';
import { sqlIdentifier } from './clickhouse-sql.ts';
import type { RowBinaryColumns, RowBinaryType } from './clickhouse-rowbinary.ts';
import { CLOSED_ERROR_STATUS, eventTimeMs } from './report.ts';

/**
 * ClickHouse tables of the usage analytics, in SQL that ClickHouse 18.16 and
 * current releases both accept (no DateTime64, no LowCardinality, no TTL).
 *
 * usage_events holds one row per outcome event, ordered by
 * (account_id, at_ms, id) so an account's window is one primary-key range,
 * and partitioned by month; small granules keep FINAL from merging
 * neighbouring accounts' rows. It is a ReplacingMergeTree on `version`: a
 * redelivered event collapses with its twin, and a queued `POST /tts` row is
 * closed by inserting a new version of the same row (version = close time).
 * Closing by version rather than joining closes at query time keeps
 * `usage()` a single FINAL scan of one key range; a close has no account,
 * so a join would have to read every account's closes of the window.
 *
 * usage_jobs (queued rows again, ordered by job id) and usage_job_closes
 * (closes, ordered by job id) let either side find the other by primary key
 * whichever arrives first; see resolveClosures in clickhouse.ts.
 */

export const TABLES = { events: 'usage_events', jobs: 'usage_jobs', closes: 'usage_job_closes' } as const;

/**
 * Column types of usage_events / usage_jobs rows, in table order: the DDL
 * below and the RowBinary inserts are both generated from this list, so the
 * bytes an insert sends always match the columns it names.
 */
export const EVENT_ROW_TYPES: ReadonlyArray<readonly [keyof EventRow, RowBinaryType]> = [
  ['id', 'String'], ['at_ms', 'UInt64'], ['version', 'UInt64'], ['request_id', 'String'], ['account_id', 'String'],
  ['key_id', 'String'], ['grant_id', 'String'], ['route', 'String'], ['status', 'UInt16'], ['result', 'String'],
  ['tokens_charged', 'Float64'], ['tokens_refunded', 'Float64'], ['characters', 'UInt64'], ['audio_seconds', 'Float64'],
  ['gen_ms', 'Nullable(Float64)'], ['voice', 'String'], ['voice_name', 'String'], ['engine', 'String'],
  ['error_code', 'String'], ['cache_hit', 'UInt8'], ['queued', 'UInt8'], ['job_id', 'String'],
];

export const CLOSE_ROW_TYPES: ReadonlyArray<readonly [keyof CloseRow, RowBinaryType]> = [
  ['id', 'String'], ['job_id', 'String'], ['at_ms', 'UInt64'], ['result', 'String'], ['audio_seconds', 'Float64'],
  ['gen_ms', 'Nullable(Float64)'], ['tokens_refunded', 'Float64'], ['error_code', 'String'],
];

/** Column definitions for CREATE TABLE; `at` (derived from at_ms for partitioning) is never inserted. */
export function columnsDdl(types: ReadonlyArray<readonly [string, RowBinaryType]>): string {
  return types
    .flatMap(([name, type]) => (name === 'at_ms'
      ? [`${name} ${type}`, 'at DateTime MATERIALIZED toDateTime(intDiv(at_ms, 1000))']
      : [`${name} ${type}`]))
    .map((line) => `\n  ${line}`)
    .join(',');
}

const EVENT_COLUMNS = columnsDdl(EVENT_ROW_TYPES);
const CLOSE_COLUMNS = columnsDdl(CLOSE_ROW_TYPES);

export function schemaStatements(database: string): string[] {
  const db = sqlIdentifier(database);
  const table = (name: string) => `${db}.${sqlIdentifier(name)}`;
  return [
    `CREATE DATABASE IF NOT EXISTS ${db}`,
    `CREATE TABLE IF NOT EXISTS ${table(TABLES.events)} (${EVENT_COLUMNS}
) ENGINE = ReplacingMergeTree(version) PARTITION BY toYYYYMM(at) ORDER BY (account_id, at_ms, id)
  SETTINGS index_granularity = 1024`,
    `CREATE TABLE IF NOT EXISTS ${table(TABLES.jobs)} (${EVENT_COLUMNS}
) ENGINE = ReplacingMergeTree(version) PARTITION BY toYYYYMM(at) ORDER BY (job_id, id)`,
    `CREATE TABLE IF NOT EXISTS ${table(TABLES.closes)} (${CLOSE_COLUMNS}
) ENGINE = ReplacingMergeTree(at_ms) PARTITION BY toYYYYMM(at) ORDER BY (job_id, id)`,
  ];
}

/** A usage_events / usage_jobs row as inserted (nulls become '' except gen_ms). */
export interface EventRow {
  id: string;
  at_ms: number;
  version: number;
  request_id: string;
  account_id: string;
  key_id: string;
  grant_id: string;
  route: string;
  status: number;
  result: string;
  tokens_charged: number;
  tokens_refunded: number;
  characters: number;
  audio_seconds: number;
  gen_ms: number | null;
  voice: string;
  voice_name: string;
  engine: string;
  error_code: string;
  cache_hit: number;
  queued: number;
  job_id: string;
}

export interface CloseRow {
  id: string;
  job_id: string;
  at_ms: number;
  result: string;
  audio_seconds: number;
  gen_ms: number | null;
  tokens_refunded: number;
  error_code: string;
}

export const EVENT_ROW_COLUMNS: ReadonlyArray<keyof EventRow> = EVENT_ROW_TYPES.map(([name]) => name);
const NUMERIC_EVENT_COLUMNS = new Set<keyof EventRow>([
  'at_ms', 'version', 'status', 'tokens_charged', 'tokens_refunded', 'characters', 'audio_seconds', 'cache_hit', 'queued',
]);

/**
 * How each column of a usage_events row reads from an outcome event. Events
 * are encoded straight from the bus objects: building an EventRow per event
 * first cost more than the encoding itself, in time and in garbage.
 */
const FROM_OUTCOME: { [K in keyof EventRow]: (ev: OutcomeEvent) => EventRow[K] } = {
  id: (ev) => ev.id,
  at_ms: (ev) => eventTimeMs(ev.at, 'outcome event'),
  version: () => 0,
  request_id: (ev) => ev.requestId,
  account_id: (ev) => ev.accountId ?? '',
  key_id: (ev) => ev.keyId ?? '',
  grant_id: (ev) => ev.grantId ?? '',
  route: (ev) => ev.route,
  status: (ev) => ev.status,
  result: (ev) => ev.result,
  tokens_charged: (ev) => ev.tokensCharged,
  tokens_refunded: (ev) => ev.tokensRefunded,
  characters: (ev) => ev.characters,
  audio_seconds: (ev) => ev.audioSeconds,
  gen_ms: (ev) => ev.genMs,
  voice: (ev) => ev.voice ?? '',
  voice_name: (ev) => ev.voiceName ?? '',
  engine: (ev) => ev.engine ?? '',
  error_code: (ev) => ev.errorCode ?? '',
  cache_hit: (ev) => (ev.cacheHit ? 1 : 0),
  queued: (ev) => (ev.queued ? 1 : 0),
  job_id: (ev) => ev.jobId ?? '',
};

/** usage_events / usage_jobs columns read directly from outcome events (no EventRow in between). */
export const OUTCOME_EVENT_COLUMNS: RowBinaryColumns<OutcomeEvent> = EVENT_ROW_TYPES.map(([name, type]) => [name, type, FROM_OUTCOME[name]] as const);

/** An outcome event as a usage_events row (the slow path: inserts encode events directly). */
export function eventRowOf(ev: OutcomeEvent): EventRow {
  const row = {} as Record<string, unknown>;
  for (const column of EVENT_ROW_COLUMNS) row[column] = FROM_OUTCOME[column](ev);
  return row as unknown as EventRow;
}

export function closeRow(ev: JobCloseEvent): CloseRow {
  return {
    id: ev.id, job_id: ev.jobId, at_ms: eventTimeMs(ev.at, 'job close event'), result: ev.result,
    audio_seconds: ev.audioSeconds, gen_ms: ev.genMs, tokens_refunded: ev.tokensRefunded,
    error_code: ev.errorCode ?? '',
  };
}

/** JSON output quotes 64-bit integers; bring them back to numbers before a row is re-inserted. */
export function parseEventRow(raw: Record<string, unknown>): EventRow {
  const row = {} as Record<string, unknown>;
  for (const column of EVENT_ROW_COLUMNS) {
    const value = raw[column];
    row[column] = NUMERIC_EVENT_COLUMNS.has(column) ? Number(value) : column === 'gen_ms' && value !== null ? Number(value) : value;
  }
  return row as unknown as EventRow;
}

/** Reads a close selected with `c_`-prefixed aliases. */
export function parseCloseRow(raw: Record<string, unknown>): CloseRow {
  return {
    id: String(raw.c_id), job_id: String(raw.c_job_id), at_ms: Number(raw.c_at_ms), result: String(raw.c_result),
    audio_seconds: Number(raw.c_audio_seconds), gen_ms: raw.c_gen_ms === null ? null : Number(raw.c_gen_ms),
    tokens_refunded: Number(raw.c_tokens_refunded), error_code: String(raw.c_error_code),
  };
}

/** The queued row as it reads once its job has closed; versioned by the close time so the latest close wins. */
export function closedVersion(queued: EventRow, close: CloseRow): EventRow {
  return {
    ...queued,
    version: Math.max(1, close.at_ms),
    result: close.result,
    status: close.result === 'error' ? CLOSED_ERROR_STATUS : queued.status,
    audio_seconds: close.audio_seconds,
    gen_ms: close.gen_ms,
    error_code: close.error_code,
    tokens_refunded: queued.tokens_refunded + close.tokens_refunded,
  };
}
