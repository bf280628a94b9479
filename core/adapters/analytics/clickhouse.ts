import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { createClient, ClickHouseLogLevel, type ClickHouseClient, type ClickHouseSettings } from '@clickhouse/client';
import type { Analytics, JobCloseEvent, OutcomeEvent, UsageQuery, UsageReport } from '../../ports/analytics.ts';
import { sqlIdentifier } from './clickhouse-sql.ts';
import { selectWithExternal, type ClickHouseEndpoint, type ExternalQuery } from './clickhouse-external.ts';
import {
  CLOSE_ROW_TYPES, closedVersion, closeRow, EVENT_ROW_COLUMNS, EVENT_ROW_TYPES, eventRowOf, OUTCOME_EVENT_COLUMNS,
  parseCloseRow, parseEventRow, schemaStatements, TABLES, type CloseRow, type EventRow,
} from './clickhouse-schema.ts';
import { onceMoreIfClosedSocket } from './clickhouse-closed-socket.ts';
import { encodeRowBinary, type RowBinaryColumns } from './clickhouse-rowbinary.ts';
import { AGG_TABLES } from './clickhouse-aggregates.ts';
import { aggregatesReady, ensureAggregates, type SqlRunner } from './clickhouse-backfill.ts';
import {
  closeContributions, CONTRIBUTION_COLUMNS, duplicateTidsLookup, FIX_COLUMNS, latestClose, outcomeTid, repeatedHashesLookup, whereabouts,
  type Contribution, type Fix, type Whereabouts,
} from './clickhouse-contributions.ts';
import { p95FromLevels, parseUsageRow, staleCellsSql, usagePlan, usageSql } from './clickhouse-usage.ts';
import { buildReport, eventTimeMs } from './report.ts';

export interface ClickHouseAnalyticsOptions extends ClickHouseEndpoint {
  database: string;
}

/** The max_query_size of the look-ups: a batch's tid look-up lists its time ranges (the default is 256 KiB). */
const LOOKUP_MAX_QUERY_SIZE = String(2 * 1024 * 1024);

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
    // The library's 2.5 s left half a second before the server's 3 s; a busy event loop reads answers later than that.
    keep_alive: { idle_socket_ttl: 2000 },
  });
  const table = (name: string) => `${sqlIdentifier(opts.database)}.${sqlIdentifier(name)}`;

  async function select(query: string, settings: ClickHouseSettings = {}): Promise<Record<string, unknown>[]> {
    return onceMoreIfClosedSocket(async () => {
      const result = await client.query({ query, format: 'JSONEachRow', clickhouse_settings: settings });
      return result.json<Record<string, unknown>>();
    });
  }
  const sql: SqlRunner = { command: async (query) => void (await client.command({ query })), select: (query) => select(query) };

  try {
    for (const statement of schemaStatements(opts.database)) await client.command({ query: statement });
    await ensureAggregates(sql, opts.database);
  } catch (error) {
    await client.close();
    throw error;
  }
  let ready = false;

  /** One RowBinary INSERT naming its columns, so that MATERIALIZED and DEFAULT columns are computed by the server. */
  async function send(name: string, columns: readonly string[], chunks: Buffer[]): Promise<void> {
    if (chunks.length === 0) return;
    await onceMoreIfClosedSocket(async () => {
      const { stream } = await client.exec({
        query: `INSERT INTO ${table(name)} (${columns.map(sqlIdentifier).join(', ')}) FORMAT RowBinary`,
        values: Readable.from(chunks, { objectMode: false }),
      });
      // The answer is empty; reading it to the end hands the socket back to the pool.
      stream.resume();
      await finished(stream);
    });
  }

  async function insert<R>(name: string, rows: readonly R[], columns: RowBinaryColumns<R>): Promise<void> {
    if (rows.length === 0) return;
    await send(name, columns.map(([column]) => column), encodeRowBinary(rows, columns));
  }

  /** A SELECT whose list of values goes beside it (see clickhouse-external.ts): one request, whatever the list's length. */
  const selectWith = ({ query, tables }: ExternalQuery) =>
    onceMoreIfClosedSocket(() => selectWithExternal(opts, query, tables, { max_query_size: LOOKUP_MAX_QUERY_SIZE }));

  /** Rows of these jobs: the query reads the ids from `lookup_ids`. */
  const lookup = (ids: string[], query: string) =>
    selectWith({ query, tables: [{ name: 'lookup_ids', column: 'job_id', type: 'String', values: ids }] });

  async function queuedRows(jobIds: string[]): Promise<EventRow[]> {
    const raw = await lookup(jobIds, `SELECT ${EVENT_ROW_COLUMNS.map(sqlIdentifier).join(', ')} FROM ${table(TABLES.jobs)}
        WHERE job_id IN lookup_ids`);
    return uniqueById(raw.map(parseEventRow));
  }

  /** Every close of these jobs, once each, by job. */
  async function closesOf(jobIds: string[]): Promise<Map<string, CloseRow[]>> {
    const raw = await lookup(jobIds, `SELECT id AS c_id, job_id AS c_job_id, at_ms AS c_at_ms, result AS c_result,
          audio_seconds AS c_audio_seconds, gen_ms AS c_gen_ms, tokens_refunded AS c_tokens_refunded, error_code AS c_error_code
        FROM ${table(TABLES.closes)} WHERE job_id IN lookup_ids`);
    const byJob = new Map<string, CloseRow[]>();
    for (const close of uniqueById(raw.map(parseCloseRow))) byJob.set(close.job_id, [...(byJob.get(close.job_id) ?? []), close]);
    return byJob;
  }

  /**
   * After its contributions are in: finds which of them now exist more than
   * once (redelivered, or written by both consumers) and records the surplus
   * for the query to subtract. Whichever copy lands last sees them all, and
   * the fix with the highest copy count wins, so every interleaving ends
   * exact. `candidates` is only built when there is a duplicate to describe.
   */
  async function settle(where: Whereabouts, candidates: (tids: Set<string>) => Contribution[]): Promise<void> {
    if (where.ranges.length === 0) return;
    const hashes = await selectWith(repeatedHashesLookup(opts.database, where));
    if (hashes.length === 0) return;
    const duplicates = await selectWith(duplicateTidsLookup(opts.database, where, hashes.map((row) => BigInt(String(row.d_hash)))));
    if (duplicates.length === 0) return;
    const copies = new Map(duplicates.map((row) => [String(row.d_tid), Number(row.d_copies)]));
    const fixes = new Map<string, Fix>();
    for (const contribution of candidates(new Set(copies.keys()))) {
      const n = copies.get(contribution.tid);
      if (n !== undefined) fixes.set(contribution.tid, { contribution, copies: n });
    }
    await insert(AGG_TABLES.fixes, [...fixes.values()], FIX_COLUMNS);
  }

  /**
   * Writes the closed version of every queued row of these jobs that has a
   * close, and the contributions that move its aggregate there. Both write
   * paths store their own side first and call this after, so whichever of
   * an outcome and its close lands second sees the other: no interleaving
   * leaves a closed job counted as queued. Re-running it writes identical
   * rows (collapsed by ReplacingMergeTree) and identical tids (settled).
   */
  async function resolveClosures(jobIds: string[]): Promise<void> {
    const unique = [...new Set(jobIds)];
    if (unique.length === 0) return;
    const closes = await closesOf(unique);
    if (closes.size === 0) return;
    const closed: EventRow[] = [];
    const moves: Contribution[] = [];
    for (const row of await queuedRows([...closes.keys()])) {
      const ofJob = closes.get(row.job_id);
      if (!ofJob) continue;
      closed.push(closedVersion(row, latestClose(ofJob)!));
      moves.push(...closeContributions(row, ofJob));
    }
    await Promise.all([insert(TABLES.events, closed, EVENT_ROW_TYPES), insert(AGG_TABLES.input, moves, CONTRIBUTION_COLUMNS)]);
    await settle(whereabouts(moves.map((move) => ({ account: move.row.account_id, at: move.row.at_ms }))), () => moves);
  }

  const outcomeColumns = OUTCOME_EVENT_COLUMNS.map(([column]) => column);

  return {
    async recordOutcomes(events: OutcomeEvent[]) {
      // No dedupe here: a repeated id collapses at FINAL in usage_events and is settled in the aggregates.
      const queued = events.filter((ev) => ev.result === 'queued' && (ev.jobId ?? '') !== '');
      // One encoding feeds both the raw table and the aggregates' input (whose tid and sign take their defaults).
      const encoded = encodeRowBinary(events, OUTCOME_EVENT_COLUMNS);
      // The queued side (its own table, then the look-up of closes) only has
      // to follow its own insert; usage_events takes the rows meanwhile. A
      // closed version and its queued row may land in either order: the
      // higher version wins at FINAL.
      await Promise.all([
        send(TABLES.events, outcomeColumns, encoded),
        send(AGG_TABLES.input, outcomeColumns, encoded),
        queued.length === 0 ? undefined : (async () => {
          await insert(TABLES.jobs, queued, OUTCOME_EVENT_COLUMNS);
          await resolveClosures(queued.map((ev) => ev.jobId!));
        })(),
      ]);
      await settle(whereabouts(events.map((ev) => ({ account: ev.accountId ?? '', at: eventTimeMs(ev.at, 'outcome event') }))), (tids) => events
        .filter((ev) => tids.has(outcomeTid(ev.id)))
        .map((ev) => ({ row: eventRowOf(ev), tid: outcomeTid(ev.id), sign: 1 as const })));
    },

    async recordJobCloses(events: JobCloseEvent[]) {
      const rows = uniqueById(events).map(closeRow);
      await insert(TABLES.closes, rows, CLOSE_ROW_TYPES);
      await resolveClosures(rows.map((row) => row.job_id));
    },

    async usage(query: UsageQuery): Promise<UsageReport> {
      ready ||= await aggregatesReady(sql, opts.database);
      const plan = usagePlan(query.from.getTime(), query.to.getTime(), ready);
      if (plan === null) return buildReport([], null);
      const rows = (await select(usageSql(opts.database, query, plan))).map(parseUsageRow);
      const stale = rows.filter((row) => (row.kind === 'e' || row.kind === 'v') && row.stale > 0);
      if (stale.length > 0) {
        const errors = stale.filter((row) => row.kind === 'e').map((row) => ({ code: row.k1, status: Number(row.k2) }));
        const voices = stale.filter((row) => row.kind === 'v').map((row) => row.k1);
        const exact = new Map((await select(staleCellsSql(opts.database, query, errors, voices)))
          .map((row) => [`${String(row.s_kind)}\n${String(row.s_k1)}\n${String(row.s_k2)}`, row]));
        for (const row of stale) {
          const found = exact.get(`${row.kind}\n${row.k1}\n${row.k2}`);
          if (!found) continue;
          if (row.kind === 'e') row.lastAtMs = Number(found.s_last_at);
          else Object.assign(row, { voiceName: (found.s_vname as string) || null, engine: (found.s_eng as string) || null });
        }
      }
      const total = rows.find((row) => row.kind === 't');
      return buildReport(rows, total ? p95FromLevels(total.genCount, total.genAtLevels) : null);
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
