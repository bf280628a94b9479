import { groupCommit, type EmbeddedDb } from '../embedded-db.ts';
import type { ChargeCommand, ChargeWriteResult, LedgerEntry } from '../../ports/documents.ts';
import type { JobRecord, JobsStore, KeyTaken, QueueFull, QueueLimits, SubmissionKey } from '../../ports/jobs.ts';
import type { Charge } from '../../ports/charge.ts';
import { checkCharge } from './commands.ts';
import { createSqliteCharger, isUniqueViolation, readSqliteGrant } from './sqlite-billing.ts';
import { createDocumentTables } from './sqlite-schema.ts';
import { createJobTables, JOB_INSERT, jobParams, toJob } from './sqlite-jobs-schema.ts';

type SubmissionMethods = Pick<JobsStore, 'submission' | 'acceptedWithKey' | 'unpublished' | 'markPublished' | 'confirmCharges' | 'repair'>;

/**
 * `POST /tts` submissions on the embedded file: the queue-limit check, the
 * grant's conditional charge with its ledger outbox row, the job and its
 * `tts_job_outbox` row are ONE transaction (shared with the other writes of
 * the same event-loop turn by the group commit). Nothing of it exists until
 * it commits, so a crash leaves either all of it or none: there is nothing
 * to repair, and the outbox rows are what the jobs plugin publishes.
 */
export function createSqliteSubmissions(db: EmbeddedDb): SubmissionMethods {
  createDocumentTables(db);
  createJobTables(db);
  const applyCharge = createSqliteCharger(db);
  const readGrant = readSqliteGrant(db);
  const writes = groupCommit(db);
  const insertJob = db.prepare(JOB_INSERT);
  const insertOutbox = db.prepare('INSERT INTO tts_job_outbox (job_id, queued_at) VALUES (?, ?)');
  const countFor = db.prepare('SELECT n FROM tts_active_counts WHERE account_id = ?').pluck();
  const count = (accountId: string) => (countFor.get(accountId) as number | undefined) ?? 0;
  const selectUnpublished = db.prepare('SELECT job_id FROM tts_job_outbox WHERE queued_at < ? ORDER BY seq LIMIT ?').pluck();
  // One pass over the (small) outbox per batch.
  const deleteOutbox = db.prepare('DELETE FROM tts_job_outbox WHERE job_id IN (SELECT value FROM json_each(?))');
  const selectCharge = db.prepare('SELECT charge FROM tts_jobs WHERE id = ?').pluck();
  // A key is held while kept and its job exists (a claim whose job is gone holds nothing).
  const keyHeld = db.prepare('SELECT 1 FROM tts_job_keys k JOIN tts_jobs j ON j.id = k.job_id WHERE k.key = ? AND k.created_at >= ?').pluck();
  // An expired claim of the key is replaced: the key may name a new job once it is no longer kept.
  const claimKey = db.prepare('INSERT OR REPLACE INTO tts_job_keys (key, job_id, fingerprint, created_at) VALUES (?, ?, ?, ?)');
  const selectKeyHolder = db.prepare(`SELECT k.fingerprint AS key_fingerprint, j.* FROM tts_job_keys k JOIN tts_jobs j ON j.id = k.job_id
    WHERE k.key = ? AND k.created_at >= ?`);

  const accept = db.transaction((job: JobRecord, cmd: ChargeCommand, nowMs: number, limits: QueueLimits, key: SubmissionKey | undefined): ChargeWriteResult | QueueFull | KeyTaken => {
    const queued = job.status === 'queued';
    // Read inside the write transaction: no other submission can slip in between these checks and the inserts.
    if (key && keyHeld.get(key.key, key.keptSince)) return { ok: false, keyTaken: true };
    if (queued && count('*') >= limits.maxDepth) return { ok: false, queueFull: 'depth' };
    if (queued && count(job.accountId) >= limits.perAccount) return { ok: false, queueFull: 'account' };
    const grant = applyCharge(cmd, nowMs);
    if (!grant) return { ok: false, grant: null };
    insertJob.run(jobParams(job));
    // A cache hit has no message to publish, but its accept's outcome event waits here like any other's.
    insertOutbox.run(job.id, job.createdAt);
    if (key) claimKey.run(key.key, job.id, key.fingerprint, job.createdAt);
    return { ok: true, grant };
  });

  return {
    submission(job, limits, key) {
      return {
        async write(cmd: ChargeCommand, charge: Charge) {
          const nowMs = checkCharge(cmd);
          try {
            const result = await writes.run(() => accept({ ...job, charge }, cmd, nowMs, limits, key));
            if (result.ok || 'queueFull' in result || 'keyTaken' in result) return result;
          } catch (err) {
            // An entry id already in the outbox rolls the whole submission back.
            if (!isUniqueViolation(err)) throw err;
          }
          return { ok: false, grant: readGrant(cmd.grantId) };
        },
        // A refused submission wrote nothing.
        async abandon() {},
      };
    },
    // Nothing here is pending: the job and its key commit together or not at all.
    async acceptedWithKey(key, keptSince) {
      const row = selectKeyHolder.get(key, keptSince) as Record<string, unknown> | undefined;
      return row ? { job: toJob(row), fingerprint: row.key_fingerprint as string } : null;
    },
    async unpublished(before, limit) {
      return selectUnpublished.all(before, limit) as string[];
    },
    async markPublished(jobIds) {
      if (jobIds.length > 0) await writes.run(() => deleteOutbox.run(JSON.stringify(jobIds)));
    },
    async confirmCharges(entries: LedgerEntry[]) {
      // The charge and its job commit together here; an entry naming a job that does not hold it has no owner.
      return entries.filter((e) => {
        if (e.kind !== 'charge' || !e.jobId) return false;
        const stored = selectCharge.get(e.jobId) as string | null | undefined;
        return !stored || (JSON.parse(stored) as Charge).id !== e.id;
      });
    },
    async repair() {
      return { abandoned: 0, healed: 0 };
    },
  };
}
