import type { EmbeddedDb } from '../embedded-db.ts';
import type { Analytics, JobCloseEvent, OutcomeEvent, UsageQuery, UsageReport } from '../../ports/analytics.ts';
import { buildReport, eventTimeMs } from './report.ts';
import { inPlaceRunner, queryUsage, USAGE_STATEMENTS, type UsageParams } from './sqlite-usage-sql.ts';
import { ReadThread } from './sqlite-usage-thread.ts';
import { createCellUpkeep } from './sqlite-usage-cells.ts';

/**
 * Embedded analytics in the shared SQLite file. Outcome rows and job closes
 * are stored as they arrive (primary key on the event id makes redelivery a
 * no-op) and a queued row is matched with its latest close, so a close that
 * arrives before its outcome row still counts. Daily cells kept in the same
 * transactions (sqlite-usage-cells.ts) answer the window's whole days, so a
 * query's cost does not grow with the account's history. `/usage`
 * queries run on a worker thread with its own read-only connection (WAL
 * lets it read beside the writer), so a long query never stalls the event
 * loop; an in-memory database (unit tests) is queried in place.
 */

const SCHEMA = `
CREATE TABLE IF NOT EXISTS usage_events (
  id TEXT PRIMARY KEY,
  at_ms INTEGER NOT NULL,
  request_id TEXT NOT NULL,
  account_id TEXT,
  key_id TEXT,
  grant_id TEXT,
  route TEXT NOT NULL,
  status INTEGER NOT NULL,
  result TEXT NOT NULL,
  tokens_charged REAL NOT NULL,
  tokens_refunded REAL NOT NULL,
  characters INTEGER NOT NULL,
  audio_seconds REAL NOT NULL,
  gen_ms REAL,
  voice TEXT,
  voice_name TEXT,
  engine TEXT,
  error_code TEXT,
  cache_hit INTEGER NOT NULL,
  queued INTEGER NOT NULL,
  job_id TEXT
);
CREATE INDEX IF NOT EXISTS usage_events_account_at ON usage_events (account_id, at_ms);
CREATE TABLE IF NOT EXISTS usage_job_closes (
  id TEXT PRIMARY KEY,
  job_id TEXT NOT NULL,
  at_ms INTEGER NOT NULL,
  result TEXT NOT NULL,
  audio_seconds REAL NOT NULL,
  gen_ms REAL,
  tokens_refunded REAL NOT NULL,
  error_code TEXT
);
CREATE INDEX IF NOT EXISTS usage_job_closes_job ON usage_job_closes (job_id, at_ms);
`;

export interface SqliteAnalyticsOptions {
  /** false: read every window from the raw rows (the reference the cells are tested against) */
  dailyCells?: boolean;
}

export function createSqliteAnalytics(db: EmbeddedDb, options: SqliteAnalyticsOptions = {}): Analytics {
  db.exec(SCHEMA);
  const cells = createCellUpkeep(db);

  const insertOutcome = db.prepare(`INSERT OR IGNORE INTO usage_events
    (id, at_ms, request_id, account_id, key_id, grant_id, route, status, result, tokens_charged, tokens_refunded,
     characters, audio_seconds, gen_ms, voice, voice_name, engine, error_code, cache_hit, queued, job_id)
    VALUES (@id, @atMs, @requestId, @accountId, @keyId, @grantId, @route, @status, @result, @tokensCharged,
     @tokensRefunded, @characters, @audioSeconds, @genMs, @voice, @voiceName, @engine, @errorCode, @cacheHit,
     @queued, @jobId)`);
  const insertClose = db.prepare(`INSERT OR IGNORE INTO usage_job_closes
    (id, job_id, at_ms, result, audio_seconds, gen_ms, tokens_refunded, error_code)
    VALUES (@id, @jobId, @atMs, @result, @audioSeconds, @genMs, @tokensRefunded, @errorCode)`);
  const thread = db.memory ? null : new ReadThread(db.name, USAGE_STATEMENTS);
  const reads = thread ?? inPlaceRunner(db);

  const closeExists = db.prepare('SELECT 1 FROM usage_job_closes WHERE id = ?').pluck();

  const recordOutcomes = db.transaction((events: OutcomeEvent[]) => {
    const added: string[] = [];
    for (const ev of events) {
      const { changes } = insertOutcome.run({
        ...ev, atMs: eventTimeMs(ev.at, 'outcome event'),
        cacheHit: ev.cacheHit ? 1 : 0, queued: ev.queued ? 1 : 0,
      });
      if (changes === 1) added.push(ev.id);
    }
    cells.outcomesAdded(added);
  });
  const recordJobCloses = db.transaction((events: JobCloseEvent[]) => {
    const rows = events.map((ev) => ({ ...ev, atMs: eventTimeMs(ev.at, 'job close event') }));
    const fresh = rows.filter((row) => !closeExists.get(row.id));
    cells.closing([...new Set(fresh.map((row) => row.jobId))], () => {
      for (const row of fresh) insertClose.run(row);
    });
  });

  return {
    async recordOutcomes(events) {
      recordOutcomes(events);
    },
    async recordJobCloses(events) {
      recordJobCloses(events);
    },
    async usage(query: UsageQuery): Promise<UsageReport> {
      const params: UsageParams = {
        accountId: query.accountId,
        scopeAll: query.scope === 'account' ? 1 : 0,
        keyId: query.keyId,
        fromMs: query.from.getTime(),
        toMs: query.to.getTime(),
      };
      const { rows, p95GenMs } = await queryUsage(reads, params, { cells: options.dailyCells ?? true });
      return buildReport(rows, p95GenMs);
    },
    async ping() {
      db.prepare('SELECT 1').get();
    },
    async close() {
      // The embedded file is shared with other adapters; its owner closes it. The query thread is ours.
      await thread?.close();
    },
  };
}
