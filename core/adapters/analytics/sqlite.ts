import type { EmbeddedDb } from '../embedded-db.ts';
import type { Analytics, JobCloseEvent, OutcomeEvent, UsageQuery, UsageReport } from '../../ports/analytics.ts';
import { buildReport, CLOSED_ERROR_STATUS, DAY_MS, eventTimeMs, quantileIndex, type DimKind, type DimRow } from './report.ts';

/**
 * Embedded analytics in the shared SQLite file. Outcome rows and job closes
 * are stored as they arrive (primary key on the event id makes redelivery a
 * no-op) and a queued row is matched with its latest close at query time, so
 * a close that arrives before its outcome row still counts.
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

export function createSqliteAnalytics(db: EmbeddedDb): Analytics {
  db.exec(SCHEMA);

  const insertOutcome = db.prepare(`INSERT OR IGNORE INTO usage_events
    (id, at_ms, request_id, account_id, key_id, grant_id, route, status, result, tokens_charged, tokens_refunded,
     characters, audio_seconds, gen_ms, voice, voice_name, engine, error_code, cache_hit, queued, job_id)
    VALUES (@id, @atMs, @requestId, @accountId, @keyId, @grantId, @route, @status, @result, @tokensCharged,
     @tokensRefunded, @characters, @audioSeconds, @genMs, @voice, @voiceName, @engine, @errorCode, @cacheHit,
     @queued, @jobId)`);
  const insertClose = db.prepare(`INSERT OR IGNORE INTO usage_job_closes
    (id, job_id, at_ms, result, audio_seconds, gen_ms, tokens_refunded, error_code)
    VALUES (@id, @jobId, @atMs, @result, @audioSeconds, @genMs, @tokensRefunded, @errorCode)`);
  const dimensions = db.prepare(DIMENSIONS_SQL);
  const p95 = db.prepare(P95_SQL).pluck();

  const recordOutcomes = db.transaction((events: OutcomeEvent[]) => {
    for (const ev of events) {
      insertOutcome.run({
        ...ev, atMs: eventTimeMs(ev.at, 'outcome event'),
        cacheHit: ev.cacheHit ? 1 : 0, queued: ev.queued ? 1 : 0,
      });
    }
  });
  const recordJobCloses = db.transaction((events: JobCloseEvent[]) => {
    for (const ev of events) insertClose.run({ ...ev, atMs: eventTimeMs(ev.at, 'job close event') });
  });

  return {
    async recordOutcomes(events) {
      recordOutcomes(events);
    },
    async recordJobCloses(events) {
      recordJobCloses(events);
    },
    async usage(query: UsageQuery): Promise<UsageReport> {
      const params = {
        accountId: query.accountId,
        scopeAll: query.scope === 'account' ? 1 : 0,
        keyId: query.keyId,
        fromMs: query.from.getTime(),
        toMs: query.to.getTime(),
      };
      const rows = (dimensions.all(params) as RawDimRow[]).map(toDimRow);
      const genCount = rows.find((row) => row.kind === 't')?.genCount ?? 0;
      const p95GenMs = genCount > 0 ? (p95.get({ ...params, offset: quantileIndex(genCount) }) as number) : null;
      return buildReport(rows, p95GenMs);
    },
    async ping() {
      db.prepare('SELECT 1').get();
    },
    async close() {
      // The embedded file is shared with other adapters; its owner closes it.
    },
  };
}
