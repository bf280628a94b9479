/**
 * Uploads a crash cut off. GridFS writes a file's chunks as it goes and its
 * file document only at the end, so an inference or api process killed while
 * it streams a job's scratch PCM or WAV into GridFS leaves chunks that no
 * file names (hundreds of MB each) and nothing else ever removes; the
 * directory adapter leaves a file in `tmp/` the same way. A failed put
 * cleans up after itself; this sweep (`core:blob-orphan-sweep`, pipelines
 * role) removes what a killed one left, through the blobs port's
 * `sweepOrphans`. An adapter without that method has nothing to sweep.
 */
import type { Blobs } from './ports/blobs.ts';
import type { Logger } from './logger.ts';
import { startRelayLoop, type PassOutcome, type RelayLoop } from './relay-loop.ts';

export const BLOB_SWEEP_DEFAULTS = {
  /**
   * Left alone until nothing was written to it for 6 hours. An upload in
   * progress looks exactly like a dead one except for its age, and the
   * longest writers are far inside that: a streaming response's saved copy
   * is renewed for at most 4 hours ("longer than any response"), an
   * audiobook chapter attempt that makes no progress for 45 minutes
   * (AUDIOBOOK_STALL_SECONDS) fails, a stream without audio for 2 minutes is
   * abandoned, and a job's render takes minutes. The age counts from an
   * upload's LAST write, so even a 4-hour upload is 6 idle hours from being
   * touched; the cost is that a crash's leftovers stay about 6 hours.
   */
  maxAgeMs: 6 * 60 * 60 * 1000,
  /** a pass every 10 minutes, the first a minute after start (not in the rush of a rolling restart) */
  intervalMs: 10 * 60 * 1000,
  firstDelayMs: 60 * 1000,
  /** uploads removed per call; the loop calls again at once while a call removed a full batch */
  batch: 100,
};

export interface BlobSweepOptions {
  blobs: Blobs;
  logger: Logger;
  maxAgeMs?: number;
  intervalMs?: number;
  firstDelayMs?: number;
  batch?: number;
  now?: () => number;
}

/** Starts the periodic sweep and returns its stop, which waits for the batch in progress. */
export function startBlobSweep(opts: BlobSweepOptions): () => Promise<void> {
  const { blobs, logger } = opts;
  if (!blobs.sweepOrphans) return async () => undefined;
  const maxAgeMs = opts.maxAgeMs ?? BLOB_SWEEP_DEFAULTS.maxAgeMs;
  const batch = opts.batch ?? BLOB_SWEEP_DEFAULTS.batch;
  const now = opts.now ?? Date.now;

  const pass = async (): Promise<PassOutcome> => {
    const removed = await blobs.sweepOrphans!(new Date(now() - maxAgeMs), batch);
    if (removed === 0) return 'idle';
    logger.info('removed uploads a crashed process left in the blob store', { uploads: removed, idleHours: maxAgeMs / 3_600_000 });
    return removed >= batch ? 'full' : 'some';
  };

  let stopped = false;
  let loop: RelayLoop | null = null;
  const first = setTimeout(() => {
    if (!stopped) loop = startRelayLoop({ name: 'blob orphan sweep', intervalMs: opts.intervalMs ?? BLOB_SWEEP_DEFAULTS.intervalMs, pass, logger });
  }, opts.firstDelayMs ?? BLOB_SWEEP_DEFAULTS.firstDelayMs);
  return async () => {
    stopped = true;
    clearTimeout(first);
    await loop?.stop();
  };
}
