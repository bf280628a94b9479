import { sqlIdentifier } from './clickhouse-sql.ts';
import { EVENT_ROW_COLUMNS, TABLES } from './clickhouse-schema.ts';
import { AGG_TABLES, aggregateStatements, FIX_EVENT_COLUMNS, FIX_ROW_TYPES, VIEWS } from './clickhouse-aggregates.ts';
import { CLOSED_ERROR_STATUS } from './report.ts';

/**
 * Creating the aggregate tables at start-up and filling them once from the
 * raw tables (usage_events, usage_jobs, usage_job_closes), for deployments
 * that already hold usage when they upgrade. See README, Usage.
 */

/** Creating this table without IF NOT EXISTS elects the one process that backfills. */
export function backfillMarkerStatement(database: string): string {
  return `CREATE TABLE ${sqlIdentifier(database)}.${sqlIdentifier(AGG_TABLES.backfill)} (finished_at DateTime) ENGINE = TinyLog`;
}

/** Everything aggregate, views first; dropping these and restarting rebuilds the aggregates from the raw tables. */
export function dropAggregateStatements(database: string): string[] {
  const t = (name: string) => `${sqlIdentifier(database)}.${sqlIdentifier(name)}`;
  return [...Object.values(VIEWS), ...Object.values(AGG_TABLES)].map((name) => `DROP TABLE IF EXISTS ${t(name)}`);
}

/**
 * The contributions the live write path would have made for what the raw
 * tables hold, with the same tids: every outcome row that is not a queued
 * job row (usage_events), every queued job row (usage_jobs), and each
 * job's move to its latest close (usage_job_closes). Superseded closes are left out:
 * their contributions cancel, and a writer that meets them later writes
 * both halves of the pair.
 */
export function backfillSelect(database: string): string {
  const t = (name: string) => `${sqlIdentifier(database)}.${sqlIdentifier(name)}`;
  const cols = EVENT_ROW_COLUMNS.join(', ');
  // A row without its queued twin in usage_jobs counts as it stands: no close can ever find it to move it.
  const plain = `SELECT ${cols}, concat('o:', id) AS b_tid, toInt8(1) AS b_sign FROM ${t(TABLES.events)} FINAL
  WHERE id NOT IN (SELECT id FROM ${t(TABLES.jobs)})`;
  const queued = `SELECT ${cols}, concat('o:', id) AS b_tid, toInt8(1) AS b_sign FROM ${t(TABLES.jobs)} FINAL`;
  // The closed version of a queued row, as closedVersion() in clickhouse-schema.ts writes it.
  // The latest close is read as one tuple: argMax over a Nullable column alone would skip the NULLs.
  const CLOSE_FIELDS = ['id', 'at_ms', 'result', 'audio_seconds', 'gen_ms', 'tokens_refunded', 'error_code'];
  const c = (name: string) => `c_latest.${CLOSE_FIELDS.indexOf(name) + 1}`;
  const closed: Record<string, string> = {
    version: `greatest(toUInt64(1), ${c('at_ms')})`, result: c('result'),
    status: `if(${c('result')} = 'error', toUInt16(${CLOSED_ERROR_STATUS}), q_status)`, audio_seconds: c('audio_seconds'),
    gen_ms: c('gen_ms'), error_code: c('error_code'), tokens_refunded: `q_tokens_refunded + ${c('tokens_refunded')}`,
  };
  const pick = EVENT_ROW_COLUMNS.map((name) => (closed[name] ? `if(s = 1, ${closed[name]}, q_${name})` : `q_${name}`)).join(',\n    ');
  const moves = `SELECT ${pick},
    concat(if(s = 1, 'a+:', 'a-:'), toString(length(q_id)), ':', q_id, ':', ${c('id')}) AS b_tid, toInt8(s) AS b_sign
  FROM (
    SELECT ${EVENT_ROW_COLUMNS.filter((name) => name !== 'job_id').map((name) => `${name} AS q_${name}`).join(', ')}, job_id, job_id AS q_job_id
    FROM ${t(TABLES.jobs)} FINAL
  ) AS queued_rows ALL INNER JOIN (
    SELECT job_id, argMax((${CLOSE_FIELDS.join(', ')}), (at_ms, id)) AS c_latest FROM ${t(TABLES.closes)} GROUP BY job_id
  ) AS latest_closes USING job_id
  ARRAY JOIN [1, -1] AS s`;
  return `${plain}\nUNION ALL\n${queued}\nUNION ALL\n${moves}`;
}

export function backfillStatements(database: string): { insert: string; duplicates: string; fixes: string; finished: string } {
  const t = (name: string) => `${sqlIdentifier(database)}.${sqlIdentifier(name)}`;
  const inputColumns = [...EVENT_ROW_COLUMNS, 'tid', 'sign'].map(sqlIdentifier).join(', ');
  const ids = t(AGG_TABLES.ids);
  const duplicateTids = `SELECT tid AS b_tid, count() AS b_copies FROM ${ids}
    WHERE tid_hash IN (SELECT tid_hash FROM ${ids} GROUP BY tid_hash HAVING count() > 1) GROUP BY tid HAVING b_copies > 1`;
  return {
    insert: `INSERT INTO ${t(AGG_TABLES.input)} (${inputColumns}) ${backfillSelect(database)}`,
    duplicates: `SELECT count() AS n FROM (${duplicateTids})`,
    // Tids that live writers also wrote while the backfill ran: the surplus is recorded like theirs.
    fixes: `INSERT INTO ${t(AGG_TABLES.fixes)} (${FIX_ROW_TYPES.map(([name]) => sqlIdentifier(name)).join(', ')})
SELECT ${FIX_EVENT_COLUMNS.join(', ')}, b_tid, b_sign, b_copies
FROM (${backfillSelect(database)}) AS contributions ANY INNER JOIN (${duplicateTids}) AS duplicated USING b_tid`,
    finished: `INSERT INTO ${t(AGG_TABLES.backfill)} (finished_at) VALUES (now())`,
  };
}

/** What setting up the aggregates needs from a client. */
export interface SqlRunner {
  command(query: string): Promise<void>;
  select(query: string): Promise<Record<string, unknown>[]>;
}

const TABLE_ALREADY_EXISTS = '57';

/** The server's error code: the client parses it from current releases' messages only, 18.16 writes `Code: 57, ...`. */
function serverErrorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' || typeof code === 'number') return String(code);
  return /\bCode: (\d+)/.exec(error instanceof Error ? error.message : String(error))?.[1];
}

/**
 * Creates the aggregate tables and views if they are missing, then elects
 * one process (the one whose CREATE of the marker table succeeds) to fill
 * them from the raw tables. Other processes write live contributions at
 * once; a tid both write is a duplicate like any other, and the backfill
 * records those it finds. A failed backfill drops the aggregates again so
 * that the next start-up begins afresh. Answers whether this call backfilled.
 */
export async function ensureAggregates(sql: SqlRunner, database: string): Promise<boolean> {
  for (const statement of aggregateStatements(database)) await sql.command(statement);
  try {
    await sql.command(backfillMarkerStatement(database));
  } catch (error) {
    if (serverErrorCode(error) === TABLE_ALREADY_EXISTS) return false;
    throw error;
  }
  const steps = backfillStatements(database);
  try {
    await sql.command(steps.insert);
    const duplicates = Number((await sql.select(steps.duplicates))[0]?.n ?? 0);
    if (duplicates > 0) await sql.command(steps.fixes);
    await sql.command(steps.finished);
  } catch (error) {
    for (const statement of dropAggregateStatements(database)) await sql.command(statement).catch(() => undefined);
    throw error;
  }
  return true;
}

/** True once a backfill has finished: until then `usage()` reads the raw rows only. */
export async function aggregatesReady(sql: SqlRunner, database: string): Promise<boolean> {
  try {
    const rows = await sql.select(`SELECT count() AS n FROM ${sqlIdentifier(database)}.${sqlIdentifier(AGG_TABLES.backfill)}`);
    return Number(rows[0]?.n ?? 0) > 0;
  } catch {
    return false;
  }
}

/** Drops and rebuilds the aggregates from the raw tables (the bench loads raw rows directly, then calls this). */
export async function rebuildAggregates(sql: SqlRunner, database: string): Promise<void> {
  for (const statement of dropAggregateStatements(database)) await sql.command(statement);
  await ensureAggregates(sql, database);
}
