import type { EmbeddedDb } from '../embedded-db.ts';
import type { JobRecord } from '../../ports/jobs.ts';

/**
 * Tables of the embedded jobs store: the jobs, the queue depth counters kept
 * by triggers, the audio cache and the outbox of `tts.jobs` messages.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS tts_jobs (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  key_id TEXT,
  status TEXT NOT NULL,
  source TEXT NOT NULL,
  text TEXT NOT NULL,
  voice_id TEXT NOT NULL,
  voice_name TEXT,
  engine TEXT NOT NULL,
  emotion TEXT NOT NULL,
  speed REAL NOT NULL,
  ai_refine INTEGER NOT NULL,
  text_length INTEGER NOT NULL,
  cache_key TEXT NOT NULL,
  charge TEXT,
  audio_key TEXT,
  duration_seconds REAL,
  processing_ms INTEGER,
  attempts INTEGER NOT NULL DEFAULT 0,
  lease_owner TEXT,
  lease_until TEXT,
  error_code TEXT,
  error TEXT,
  refunded INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  started_at TEXT,
  completed_at TEXT
);
CREATE INDEX IF NOT EXISTS tts_jobs_active ON tts_jobs (status) WHERE status IN ('queued', 'processing');
-- Per-account depth is read from tts_active_counts: an index per account would only cost every insert a page.
DROP INDEX IF EXISTS tts_jobs_account_active;
CREATE INDEX IF NOT EXISTS tts_jobs_completed ON tts_jobs (completed_at) WHERE status = 'completed';
-- Queue depth per account (and '*' for the whole queue), kept by triggers so the
-- accept path reads two rows instead of counting a queue that can be long.
-- Only async jobs count: saved copies of synchronous responses are not queued work.
CREATE TABLE IF NOT EXISTS tts_active_counts (
  account_id TEXT PRIMARY KEY,
  n INTEGER NOT NULL
);
CREATE TRIGGER IF NOT EXISTS tts_jobs_count_insert AFTER INSERT ON tts_jobs
WHEN NEW.source = 'tts' AND NEW.status IN ('queued', 'processing')
BEGIN
  INSERT INTO tts_active_counts (account_id, n) VALUES (NEW.account_id, 1), ('*', 1)
  ON CONFLICT (account_id) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS tts_jobs_count_leave AFTER UPDATE OF status ON tts_jobs
WHEN NEW.source = 'tts' AND OLD.status IN ('queued', 'processing') AND NEW.status NOT IN ('queued', 'processing')
BEGIN
  UPDATE tts_active_counts SET n = n - 1 WHERE account_id IN (OLD.account_id, '*');
END;
CREATE TRIGGER IF NOT EXISTS tts_jobs_count_enter AFTER UPDATE OF status ON tts_jobs
WHEN NEW.source = 'tts' AND OLD.status NOT IN ('queued', 'processing') AND NEW.status IN ('queued', 'processing')
BEGIN
  INSERT INTO tts_active_counts (account_id, n) VALUES (NEW.account_id, 1), ('*', 1)
  ON CONFLICT (account_id) DO UPDATE SET n = n + 1;
END;
CREATE TABLE IF NOT EXISTS tts_audio_cache (
  cache_key TEXT PRIMARY KEY,
  audio_key TEXT NOT NULL,
  duration_seconds REAL NOT NULL
);
-- The Idempotency-Key each keyed job was accepted under, written in the
-- transaction that accepts it: one job per key while the key is kept.
CREATE TABLE IF NOT EXISTS tts_job_keys (
  key TEXT PRIMARY KEY,
  job_id TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  created_at TEXT NOT NULL
) WITHOUT ROWID;
-- Accepted jobs whose publication (the tts.jobs message of a queued job, the
-- accept's outcome event) is not yet known to be done: written in the
-- transaction that accepts the job, deleted once both are published.
-- It holds only what is in flight, so it has no index to write: a row is one
-- append at the end of the table.
CREATE TABLE IF NOT EXISTS tts_job_outbox (
  seq INTEGER PRIMARY KEY,
  job_id TEXT NOT NULL,
  queued_at TEXT NOT NULL
);
`;

export function createJobTables(db: EmbeddedDb): void {
  db.exec(SCHEMA);
}

export type Row = Record<string, any>;

export const JOB_INSERT = `INSERT INTO tts_jobs (id, account_id, key_id, status, source, text, voice_id, voice_name, engine, emotion, speed,
    ai_refine, text_length, cache_key, charge, audio_key, duration_seconds, processing_ms, attempts, lease_owner, lease_until, error_code, error, refunded,
    created_at, started_at, completed_at)
    VALUES (@id, @account_id, @key_id, @status, @source, @text, @voice_id, @voice_name, @engine, @emotion, @speed, @ai_refine, @text_length,
    @cache_key, @charge, @audio_key, @duration_seconds, @processing_ms, @attempts, @lease_owner, @lease_until, @error_code, @error, @refunded,
    @created_at, @started_at, @completed_at)`;

export function jobParams(job: JobRecord): Record<string, string | number | null> {
  return {
    id: job.id, account_id: job.accountId, key_id: job.keyId, status: job.status, source: job.source, text: job.text,
    voice_id: job.voiceId, voice_name: job.voiceName, engine: job.engine, emotion: job.emotion, speed: job.speed,
    ai_refine: job.aiRefine ? 1 : 0, text_length: job.textLength, cache_key: job.cacheKey,
    charge: job.charge ? JSON.stringify(job.charge) : null, audio_key: job.audioKey, duration_seconds: job.durationSeconds,
    processing_ms: job.processingMs, attempts: job.attempts, lease_owner: job.leaseOwner, lease_until: job.leaseUntil, error_code: job.errorCode, error: job.error,
    refunded: job.refunded ? 1 : 0, created_at: job.createdAt, started_at: job.startedAt, completed_at: job.completedAt,
  };
}

export function toJob(r: Row): JobRecord {
  return {
    id: r.id, accountId: r.account_id, keyId: r.key_id, status: r.status, source: r.source, text: r.text,
    voiceId: r.voice_id, voiceName: r.voice_name, engine: r.engine, emotion: r.emotion, speed: r.speed,
    aiRefine: r.ai_refine === 1, textLength: r.text_length, cacheKey: r.cache_key,
    charge: r.charge ? JSON.parse(r.charge) : null, audioKey: r.audio_key, durationSeconds: r.duration_seconds,
    processingMs: r.processing_ms, attempts: r.attempts, leaseOwner: r.lease_owner, leaseUntil: r.lease_until,
    errorCode: r.error_code, error: r.error, refunded: r.refunded === 1, createdAt: r.created_at,
    startedAt: r.started_at, completedAt: r.completed_at,
  };
}

