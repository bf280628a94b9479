import { groupCommit, type EmbeddedDb } from '../embedded-db.ts';
import type { JobRecord, JobsStore } from '../../ports/jobs.ts';

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
CREATE INDEX IF NOT EXISTS tts_jobs_account_active ON tts_jobs (account_id, status) WHERE status IN ('queued', 'processing');
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
`;

type Row = Record<string, any>;

function toJob(r: Row): JobRecord {
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

/** Jobs in the embedded database file. The rowid keeps queue order without relying on clock ties. */
export function createSqliteJobs(db: EmbeddedDb): JobsStore {
  db.exec(SCHEMA);
  // Recount at start-up so a file written before the triggers existed starts right.
  db.exec(`BEGIN IMMEDIATE;
    DELETE FROM tts_active_counts;
    INSERT INTO tts_active_counts (account_id, n)
      SELECT account_id, COUNT(*) FROM tts_jobs WHERE source = 'tts' AND status IN ('queued', 'processing') GROUP BY account_id;
    INSERT INTO tts_active_counts (account_id, n)
      SELECT '*', COUNT(*) FROM tts_jobs WHERE source = 'tts' AND status IN ('queued', 'processing');
    COMMIT;`);
  const insert = db.prepare(`INSERT INTO tts_jobs (id, account_id, key_id, status, source, text, voice_id, voice_name, engine, emotion, speed,
    ai_refine, text_length, cache_key, charge, audio_key, duration_seconds, processing_ms, attempts, error_code, error, refunded, created_at, started_at, completed_at)
    VALUES (@id, @account_id, @key_id, @status, @source, @text, @voice_id, @voice_name, @engine, @emotion, @speed, @ai_refine, @text_length,
    @cache_key, @charge, @audio_key, @duration_seconds, @processing_ms, @attempts, @error_code, @error, @refunded, @created_at, @started_at, @completed_at)`);
  const writes = groupCommit(db);
  const byId = db.prepare('SELECT * FROM tts_jobs WHERE id = ?');
  const claim = db.prepare(`UPDATE tts_jobs SET status = 'processing', lease_owner = @owner, lease_until = @leaseUntil,
    attempts = attempts + 1, started_at = COALESCE(started_at, @now)
    WHERE id = @id AND (status = 'queued' OR (status = 'processing' AND lease_until < @now)) RETURNING *`);
  const renew = db.prepare(`UPDATE tts_jobs SET lease_until = ? WHERE id = ? AND lease_owner = ? AND status = 'processing'`);
  const release = db.prepare(`UPDATE tts_jobs SET status = 'queued', lease_owner = NULL, lease_until = NULL, error = ? WHERE id = ? AND lease_owner = ? AND status = 'processing'`);
  const complete = db.prepare(`UPDATE tts_jobs SET status = 'completed', audio_key = @audioKey, duration_seconds = @durationSeconds,
    processing_ms = @processingMs, completed_at = @completedAt, lease_owner = NULL, lease_until = NULL, error = NULL
    WHERE id = @id AND status IN ('queued', 'processing')`);
  const fail = db.prepare(`UPDATE tts_jobs SET status = 'failed', error_code = @errorCode, error = @error, completed_at = @completedAt,
    lease_owner = NULL, lease_until = NULL WHERE id = @id AND status IN ('queued', 'processing')`);
  const markRefunded = db.prepare('UPDATE tts_jobs SET refunded = 1 WHERE id = ?');
  const failStaleCopies = db.prepare(`UPDATE tts_jobs SET status = 'failed', error_code = 'synthesis_failed',
    error = 'The response was interrupted before its copy was saved.', completed_at = ?
    WHERE source = 'audio_speech' AND status = 'processing' AND started_at < ?`);
  // Saved copies of POST /audio/speech are 'processing' while their response streams; they are not queued work.
  const countFor = db.prepare('SELECT n FROM tts_active_counts WHERE account_id = ?');
  const count = (accountId: string) => (countFor.get(accountId) as { n: number } | undefined)?.n ?? 0;
  const position = db.prepare(`SELECT COUNT(*) AS n FROM tts_jobs WHERE status = 'queued' AND rowid <= (SELECT rowid FROM tts_jobs WHERE id = ? AND status = 'queued')`);
  const recent = db.prepare(`SELECT AVG(processing_ms) AS ms FROM (SELECT processing_ms FROM tts_jobs WHERE status = 'completed' AND processing_ms IS NOT NULL AND source = 'tts' ORDER BY completed_at DESC LIMIT 50)`);
  const findCached = db.prepare('SELECT audio_key, duration_seconds FROM tts_audio_cache WHERE cache_key = ?');
  const putCached = db.prepare('INSERT OR REPLACE INTO tts_audio_cache (cache_key, audio_key, duration_seconds) VALUES (?, ?, ?)');

  return {
    async create(job) {
      await writes.run(() => insert.run({
        id: job.id, account_id: job.accountId, key_id: job.keyId, status: job.status, source: job.source, text: job.text,
        voice_id: job.voiceId, voice_name: job.voiceName, engine: job.engine, emotion: job.emotion, speed: job.speed,
        ai_refine: job.aiRefine ? 1 : 0, text_length: job.textLength, cache_key: job.cacheKey,
        charge: job.charge ? JSON.stringify(job.charge) : null, audio_key: job.audioKey, duration_seconds: job.durationSeconds,
        processing_ms: job.processingMs, attempts: job.attempts, error_code: job.errorCode, error: job.error,
        refunded: job.refunded ? 1 : 0, created_at: job.createdAt, started_at: job.startedAt, completed_at: job.completedAt,
      }));
      return job;
    },
    async get(id) {
      const row = byId.get(id) as Row | undefined;
      return row ? toJob(row) : null;
    },
    async getMany(ids) {
      if (ids.length === 0) return [];
      const rows = db.prepare(`SELECT * FROM tts_jobs WHERE id IN (${ids.map(() => '?').join(',')})`).all(...ids) as Row[];
      return rows.map(toJob);
    },
    async claim(id, owner, leaseUntil, now) {
      const row = claim.get({ id, owner, leaseUntil, now }) as Row | undefined;
      return row ? toJob(row) : null;
    },
    async renewLease(id, owner, leaseUntil) {
      return renew.run(leaseUntil, id, owner).changes === 1;
    },
    async release(id, owner, error) {
      release.run(error, id, owner);
    },
    async complete(id, r) {
      return complete.run({ id, ...r }).changes === 1;
    },
    async fail(id, r) {
      return fail.run({ id, ...r }).changes === 1;
    },
    async markRefunded(id) {
      markRefunded.run(id);
    },
    async failStaleCopies(startedBefore, completedAt) {
      return failStaleCopies.run(completedAt, startedBefore).changes;
    },
    async countActive() {
      return count('*');
    },
    async countActiveByAccount(accountId) {
      return count(accountId);
    },
    async queuePosition(id) {
      const n = (position.get(id) as { n: number }).n;
      return n > 0 ? n : null;
    },
    async recentRenderMs() {
      const ms = (recent.get() as { ms: number | null }).ms;
      return ms === null ? null : Math.round(ms);
    },
    async findCached(cacheKey) {
      const row = findCached.get(cacheKey) as Row | undefined;
      return row ? { audioKey: row.audio_key, durationSeconds: row.duration_seconds } : null;
    },
    async putCached(cacheKey, audio) {
      putCached.run(cacheKey, audio.audioKey, audio.durationSeconds);
    },
  };
}
