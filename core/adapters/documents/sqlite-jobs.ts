import { readsPerTurn } from '../../per-turn.ts';
import { groupCommit, type EmbeddedDb } from '../embedded-db.ts';
import type { JobsStore } from '../../ports/jobs.ts';
import { createSqliteSubmissions } from './sqlite-submissions.ts';
import { createJobTables, JOB_INSERT, jobParams, toJob, type Row } from './sqlite-jobs-schema.ts';

/** Jobs in the embedded database file. The rowid keeps queue order without relying on clock ties. */
export function createSqliteJobs(db: EmbeddedDb): JobsStore {
  createJobTables(db);
  // Recount at start-up so a file written before the triggers existed starts right.
  db.exec(`BEGIN IMMEDIATE;
    DELETE FROM tts_active_counts;
    INSERT INTO tts_active_counts (account_id, n)
      SELECT account_id, COUNT(*) FROM tts_jobs WHERE source = 'tts' AND status IN ('queued', 'processing') GROUP BY account_id;
    INSERT INTO tts_active_counts (account_id, n)
      SELECT '*', COUNT(*) FROM tts_jobs WHERE source = 'tts' AND status IN ('queued', 'processing');
    COMMIT;`);
  const insert = db.prepare(JOB_INSERT);
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
    error = 'The response was interrupted before its copy was saved.', completed_at = @now, lease_owner = NULL, lease_until = NULL
    WHERE source = 'audio_speech' AND status = 'processing'
      AND (lease_until < @now OR (lease_until IS NULL AND started_at < @startedBefore))`);
  // Saved copies of POST /audio/speech are 'processing' while their response streams; they are not queued work.
  const countFor = db.prepare('SELECT n FROM tts_active_counts WHERE account_id = ?');
  const count = (accountId: string) => (countFor.get(accountId) as { n: number } | undefined)?.n ?? 0;
  const position = db.prepare(`SELECT COUNT(*) AS n FROM tts_jobs WHERE status = 'queued' AND rowid <= (SELECT rowid FROM tts_jobs WHERE id = ? AND status = 'queued')`);
  const recent = db.prepare(`SELECT AVG(processing_ms) AS ms FROM (SELECT processing_ms FROM tts_jobs WHERE status = 'completed' AND processing_ms IS NOT NULL AND source = 'tts' ORDER BY completed_at DESC LIMIT 50)`);
  const findCachedMany = db.prepare('SELECT cache_key, audio_key, duration_seconds FROM tts_audio_cache WHERE cache_key IN (SELECT value FROM json_each(?))');
  // Every POST /tts looks its key up: those of one turn are one statement, one read transaction.
  const cachedOf = readsPerTurn<string, Row>(async (keys) =>
    new Map((findCachedMany.all(JSON.stringify(keys)) as Row[]).map((row): [string, Row] => [row.cache_key, row])));
  const putCached = db.prepare('INSERT OR REPLACE INTO tts_audio_cache (cache_key, audio_key, duration_seconds) VALUES (?, ?, ?)');

  return {
    ...createSqliteSubmissions(db),
    async create(job) {
      await writes.run(() => insert.run(jobParams(job)));
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
    async failStaleCopies(now, startedBefore) {
      return failStaleCopies.run({ now, startedBefore }).changes;
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
      const row = await cachedOf(cacheKey);
      return row ? { audioKey: row.audio_key, durationSeconds: row.duration_seconds } : null;
    },
    async putCached(cacheKey, audio) {
      putCached.run(cacheKey, audio.audioKey, audio.durationSeconds);
    },
  };
}
