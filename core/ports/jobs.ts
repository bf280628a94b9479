import type { Charge } from './charge.ts';

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

export interface JobsStore {
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
   * Fails saved copies of synchronous responses still `processing` since
   * before `startedBefore`: their process died mid-response. Returns how many.
   */
  failStaleCopies(startedBefore: string, completedAt: string): Promise<number>;
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
