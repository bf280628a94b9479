import type { Charge } from './charge.ts';
import type { ChargeCommand, ChargeWriteResult, LedgerEntry } from './grants.ts';

/**
 * Jobs port (part of the documents system of record): `POST /tts` jobs and
 * the copies `POST /audio/speech` saves. Adapters:
 * core/adapters/documents/sqlite-jobs.ts and mongo-jobs.ts.
 */
export type JobStatus = 'queued' | 'processing' | 'completed' | 'failed';

export interface JobRecord {
  id: string;
  accountId: string;
  keyId: string | null;
  status: JobStatus;
  /** where the job came from: an async job, or a saved synchronous response */
  source: 'tts' | 'audio_speech';
  text: string;
  voiceId: string;
  voiceName: string | null;
  engine: string;
  emotion: string;
  speed: number;
  aiRefine: boolean;
  /** NFC characters submitted */
  textLength: number;
  /** identical requests share audio: hash of text, voice, speed, emotion, engine */
  cacheKey: string;
  charge: Charge | null;
  audioKey: string | null;
  durationSeconds: number | null;
  processingMs: number | null;
  attempts: number;
  /** worker holding the job and until when; an expired lease may be claimed again */
  leaseOwner: string | null;
  leaseUntil: string | null;
  errorCode: string | null;
  error: string | null;
  refunded: boolean;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
}

export interface CachedAudio {
  audioKey: string;
  durationSeconds: number;
}

/** The queue limits a `POST /tts` submission is held to, checked in the same write that accepts it. */
export interface QueueLimits {
  /** jobs queued or processing, all accounts together */
  maxDepth: number;
  /** jobs queued or processing of the submitting account */
  perAccount: number;
}

/** A submission refused for a full queue: nothing was charged. */
export type QueueFull = { ok: false; queueFull: 'depth' | 'account' };

/**
 * The `Idempotency-Key` a submission claims (core/http/idempotency.ts): while
 * it is kept, at most one job is accepted under it, whatever happened to the
 * counters store's record of it (lost with an embedded process, a Redis that
 * lost data, a process that died between the accept and the record).
 */
export interface SubmissionKey {
  /** the key, scoped to the API key that sent it */
  key: string;
  /** the request body's fingerprint, so that another body under the key is refused */
  fingerprint: string;
  /** a claim made before this instant has expired, and the key may be claimed again */
  keptSince: string;
}

/** A submission refused because another one holds its `Idempotency-Key`: nothing was charged. */
export type KeyTaken = { ok: false; keyTaken: true };

/** The job accepted under an `Idempotency-Key`, with the fingerprint of the body that claimed it. */
export type KeyHolder = { job: JobRecord; fingerprint: string };

/**
 * One `POST /tts` submission being accepted: the charge, the job, its queue
 * slot and its pending publication (its `tts.jobs` message, its accept's
 * outcome event) made one write in effect, so that after any crash a charge
 * has exactly one job, and usage hears of it (see README, "Jobs").
 */
export interface JobSubmission {
  /**
   * Charges `cmd` and accepts the job paid by `charge`, once per grant the
   * billing tries (core/billing/service.ts `charge` with `write`). A queued
   * job also takes its queue slot here: `QueueFull` when `limits` are
   * reached. `{ ok: false, grant }` when the conditional charge lost.
   * `KeyTaken` when another submission holds the submission's key.
   */
  write(cmd: ChargeCommand, charge: Charge): Promise<ChargeWriteResult | QueueFull | KeyTaken>;
  /** the billing refused after every attempt: undo what `write` left (nothing was charged) */
  abandon(): Promise<void>;
}

export interface JobsStore {
  /**
   * Opens the submission of `job` (status `queued`, or `completed` for a
   * content-cache hit, which takes no queue slot); `job.charge` is set by
   * `write`. With `key`, the job is accepted only if no other holds it.
   * No I/O until `write`.
   */
  submission(job: JobRecord, limits: QueueLimits, key?: SubmissionKey): JobSubmission;
  /**
   * The job accepted under `key` since `keptSince`; `'pending'` while that
   * submission is still being charged (its outcome unknown yet); null when
   * no job holds the key.
   */
  acceptedWithKey(key: string, keptSince: string): Promise<KeyHolder | 'pending' | null>;
  /**
   * Accepted jobs (content-cache hits too) whose publication is not yet
   * known to be done, accepted before `before`: the `tts.jobs` message of a
   * queued job and the outcome event of the request that accepted it.
   */
  unpublished(before: string, limit: number): Promise<string[]>;
  /** their publication is done */
  markPublished(jobIds: string[]): Promise<void>;
  /**
   * The ledger outbox relay hands over charge entries that name a job
   * (`entry.jobId`) before they leave the outbox: each job records its
   * charge as landed. Returns the entries no job holds any more (the
   * submission was dropped): the relay refunds them.
   */
  confirmCharges(entries: LedgerEntry[]): Promise<LedgerEntry[]>;
  /**
   * Crash repair, run at start-up and periodically: drops submissions
   * started before `staleBefore` whose charge never landed (releasing their
   * queue slots), and heals queue counters that drifted. Returns counts.
   */
  repair(staleBefore: string, now: string): Promise<{ abandoned: number; healed: number }>;
  create(job: JobRecord): Promise<JobRecord>;
  get(id: string): Promise<JobRecord | null>;
  getMany(ids: string[]): Promise<JobRecord[]>;
  /**
   * Takes a job for rendering: succeeds when it is queued, or processing
   * with an expired lease (its worker died). Counts an attempt.
   */
  claim(id: string, owner: string, leaseUntil: string, now: string): Promise<JobRecord | null>;
  /** extends the lease while rendering */
  renewLease(id: string, owner: string, leaseUntil: string): Promise<boolean>;
  /** puts a claimed job back in the queue after a failed attempt */
  release(id: string, owner: string, error: string): Promise<void>;
  /** completes once: false when the job had already ended */
  complete(id: string, result: { audioKey: string; durationSeconds: number; processingMs: number; completedAt: string }): Promise<boolean>;
  /** fails once: false when the job had already ended */
  fail(id: string, result: { errorCode: string; error: string; completedAt: string }): Promise<boolean>;
  markRefunded(id: string): Promise<void>;
  /**
   * Fails saved copies of synchronous responses still `processing` whose
   * process died mid-response: their keep-alive (`leaseUntil`, renewed
   * while the response streams) ran out before `now`, or, for a copy
   * recorded without one (by an older version), it started before
   * `startedBefore`. Returns how many.
   */
  failStaleCopies(now: string, startedBefore: string): Promise<number>;
  /** jobs queued or processing: the whole queue, and one account's share */
  countActive(): Promise<number>;
  countActiveByAccount(accountId: string): Promise<number>;
  /** 1-based position among queued jobs, oldest first */
  queuePosition(id: string): Promise<number | null>;
  /** mean render time of recent jobs, for wait estimates */
  recentRenderMs(): Promise<number | null>;
  findCached(cacheKey: string): Promise<CachedAudio | null>;
  putCached(cacheKey: string, audio: CachedAudio): Promise<void>;
}
