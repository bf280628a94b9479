import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { createClient, ClickHouseLogLevel, type ClickHouseClient, type ClickHouseSettings } from '@clickhouse/client';
import type { Analytics, JobCloseEvent, OutcomeEvent, UsageQuery, UsageReport } from '../../ports/analytics.ts';
import { sqlIdentifier, sqlStringList } from './clickhouse-sql.ts';
import {
  CLOSE_ROW_TYPES, closedVersion, closeRow, EVENT_ROW_COLUMNS, EVENT_ROW_TYPES, OUTCOME_EVENT_COLUMNS, parseCloseRow,
  parseEventRow, schemaStatements, TABLES, type CloseRow, type EventRow,
} from './clickhouse-schema.ts';
import { encodeRowBinary, type RowBinaryColumns } from './clickhouse-rowbinary.ts';
import { parseUsageRow, usageSql } from './clickhouse-usage.ts';
import { buildReport } from './report.ts';

export interface ClickHouseAnalyticsOptions {
  url: string;
  database: string;
  user: string;
  password: string;
}

/**
 * Job ids per `IN (...)` look-up, and the max_query_size those queries run
 * with (the default is 256 KiB; a job id literal is about 45 bytes). A batch
 * of the aggregator's size needs a single look-up: every sequential round
 * trip waits its turn on a busy event loop, so fewer is faster.
 */
const LOOKUP_CHUNK = 10_000;
const LOOKUP_MAX_QUERY_SIZE = String(2 * 1024 * 1024);

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** First of each id; duplicates are redeliveries of the same event, so which one is kept does not matter. */
function uniqueById<T extends { id: string }>(items: readonly T[]): T[] {
  const seen = new Set<string>();
  const out: T[] = [];
  for (const item of items) {
    if (seen.has(item.id)) continue;
    seen.add(item.id);
    out.push(item);
  }
  return out;
}

export async function createClickHouseAnalytics(opts: ClickHouseAnalyticsOptions): Promise<Analytics> {
  // No `database` on the client: the database may not exist yet, so every name
  // is qualified instead. The client's own error log is off: every failure
  // reaches the caller (the bus reports a failed batch in one line), so it
  // would only print each one a second time.
  const client: ClickHouseClient = createClient({
    url: opts.url, username: opts.user, password: opts.password, log: { level: ClickHouseLogLevel.OFF },
  });
  const table = (name: string) => `${sqlIdentifier(opts.database)}.${sqlIdentifier(name)}`;

  try {
    for (const statement of schemaStatements(opts.database)) await client.command({ query: statement });
  } catch (error) {
    await client.close();
    throw error;
  }

  /** One RowBinary INSERT naming its columns, so the MATERIALIZED `at` is computed by the server. */
  async function insert<R>(name: string, rows: readonly R[], columns: RowBinaryColumns<R>): Promise<void> {
    if (rows.length === 0) return;
    const chunks = encodeRowBinary(rows, columns);
    const names = columns.map(([column]) => sqlIdentifier(column)).join(', ');
    const { stream } = await client.exec({
      query: `INSERT INTO ${table(name)} (${names}) FORMAT RowBinary`,
      values: Readable.from(chunks, { objectMode: false }),
    });
    // The answer is empty; reading it to the end hands the socket back to the pool.
    stream.resume();
    await finished(stream);
  }

  async function select(query: string, settings: ClickHouseSettings = {}): Promise<Record<string, unknown>[]> {
    const result = await client.query({ query, format: 'JSONEachRow', clickhouse_settings: settings });
    return result.json<Record<string, unknown>>();
  }

  /** Runs one look-up per chunk of ids, all at once, and joins the rows. */
  async function lookup(ids: string[], query: (list: string) => string): Promise<Record<string, unknown>[]> {
    const parts = await Promise.all(chunks(ids, LOOKUP_CHUNK).map((part) =>
      select(query(sqlStringList(part)), { max_query_size: LOOKUP_MAX_QUERY_SIZE })));
    return parts.flat();
  }

  async function queuedRows(jobIds: string[]): Promise<EventRow[]> {
    const raw = await lookup(jobIds, (list) => `SELECT ${EVENT_ROW_COLUMNS.map(sqlIdentifier).join(', ')} FROM ${table(TABLES.jobs)}
        WHERE job_id IN (${list})`);
    return uniqueById(raw.map(parseEventRow));
  }

  async function latestCloses(jobIds: string[]): Promise<Map<string, CloseRow>> {
    // Aliases differ from column names: 18.16 would substitute an alias inside argMax.
    const raw = await lookup(jobIds, (list) => `SELECT job_id AS c_job_id, argMax(id, at_ms) AS c_id, max(at_ms) AS c_at_ms,
          argMax(result, at_ms) AS c_result, argMax(audio_seconds, at_ms) AS c_audio_seconds,
          argMax(gen_ms, at_ms) AS c_gen_ms, argMax(tokens_refunded, at_ms) AS c_tokens_refunded,
          argMax(error_code, at_ms) AS c_error_code
        FROM ${table(TABLES.closes)} WHERE job_id IN (${list}) GROUP BY job_id`);
    // Chunks hold distinct ids, so each job appears in one chunk's answer only.
    return new Map(raw.map(parseCloseRow).map((close) => [close.job_id, close]));
  }

  /**
   * Writes the closed version of every queued row of these jobs that has a
   * close. Both write paths store their own side first and call this after,
   * so whichever of an outcome and its close lands second sees the other:
   * no interleaving leaves a closed job counted as queued. Re-running it
   * writes identical rows, which ReplacingMergeTree collapses.
   */
  async function resolveClosures(jobIds: string[]): Promise<void> {
    const unique = [...new Set(jobIds)];
    if (unique.length === 0) return;
    const closes = await latestCloses(unique);
    if (closes.size === 0) return;
    const queued = await queuedRows([...closes.keys()]);
    const closed = queued.flatMap((row) => {
      const close = closes.get(row.job_id);
      return close ? [closedVersion(row, close)] : [];
    });
    await insert(TABLES.events, closed, EVENT_ROW_TYPES);
  }

  return {
    async recordOutcomes(events: OutcomeEvent[]) {
      // No dedupe here: a repeated id inside one insert collapses at FINAL exactly like one repeated across inserts.
      const queued = events.filter((ev) => ev.result === 'queued' && (ev.jobId ?? '') !== '');
      // The queued side (its own table, then the look-up of closes) only has
      // to follow its own insert; usage_events takes the rows meanwhile. A
      // closed version and its queued row may land in either order: the
      // higher version wins at FINAL.
      await Promise.all([
        insert(TABLES.events, events, OUTCOME_EVENT_COLUMNS),
        queued.length === 0 ? undefined : (async () => {
          await insert(TABLES.jobs, queued, OUTCOME_EVENT_COLUMNS);
          await resolveClosures(queued.map((ev) => ev.jobId!));
        })(),
      ]);
    },

    async recordJobCloses(events: JobCloseEvent[]) {
      const rows = uniqueById(events).map(closeRow);
      await insert(TABLES.closes, rows, CLOSE_ROW_TYPES);
      await resolveClosures(rows.map((row) => row.job_id));
    },

    async usage(query: UsageQuery): Promise<UsageReport> {
      const sql = usageSql(opts.database, query);
      if (sql === null) return buildReport([], null);
      const rows = (await select(sql)).map(parseUsageRow);
      const p95 = rows.find((row) => row.kind === 't')?.p95 ?? null;
      return buildReport(rows, p95);
    },

    async ping() {
      const result = await client.ping();
      if (!result.success) throw result.error;
    },

    async close() {
      await client.close();
    },
  };
}
