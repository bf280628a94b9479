import type { JobRecord } from '../../ports/jobs.ts';

/**
 * A job document: the record, its place in the queue, and the state of its
 * submission (see mongo-submissions.ts): `submission` while a `POST /tts`
 * is being accepted, `slot` while it holds queue slots, `publishPending`
 * until its publication (its `tts.jobs` message, its accept's outcome
 * event) is known to be out, and the `Idempotency-Key`
 * it was submitted with (unique among the jobs that carry one).
 */
export type JobDoc = Omit<JobRecord, 'id'> & {
  _id: string;
  seq?: number;
  submission?: 'pending' | 'charged' | 'abandoned';
  slot?: true;
  publishPending?: true;
  idempotencyKey?: string;
  idempotencyFingerprint?: string;
};

/** What a job document holds beside its record. */
type DocOnly = 'submission' | 'slot' | 'publishPending' | 'idempotencyKey' | 'idempotencyFingerprint';

export const ACTIVE = ['queued', 'processing'] as const;

/*
 * Queue order: milliseconds since the epoch times 1024 plus a per-process
 * sequence, so jobs of one process keep their order however fast they come
 * and jobs of several API processes interleave by their clocks. It costs no
 * write (a shared counter document did, on every submission).
 */
const SEQ_PER_MS = 1024;
let lastSeq = 0;
export function nextQueueSeq(): number {
  lastSeq = Math.max(lastSeq + 1, Date.now() * SEQ_PER_MS);
  return lastSeq;
}

export const isQueueable = (job: Pick<JobRecord, 'status'>) => (ACTIVE as readonly string[]).includes(job.status);

export function toJobDoc(job: JobRecord, extra: Partial<Pick<JobDoc, DocOnly>> = {}): JobDoc {
  const { id, ...rest } = job;
  return { ...rest, _id: id, ...(isQueueable(job) ? { seq: nextQueueSeq() } : {}), ...extra };
}

/** The record of a job document; null for a document that is not a job. */
export function fromDoc(doc: JobDoc | null): JobRecord | null {
  if (!doc || doc.status === undefined) return null;
  const {
    _id, seq: _seq, submission: _submission, slot: _slot, publishPending: _publishPending,
    idempotencyKey: _key, idempotencyFingerprint: _fingerprint, ...rest
  } = doc;
  return { ...rest, id: _id };
}

