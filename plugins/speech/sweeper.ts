import type { JobsStore } from '../../core/ports/jobs.ts';
import type { Logger } from '../../core/logger.ts';

/**
 * A saved copy whose keep-alive ran out belongs to a process that died
 * mid-response (a live one renews it, however long the response: see
 * saved-copy.ts). Copies recorded without one, by an older version, are
 * judged by their start, as they were: an hour.
 */
export const LEGACY_STALE_COPY_MS = 60 * 60 * 1000;
const SWEEP_EVERY_MS = 5 * 60 * 1000;

/** Fails saved copies of `/audio/speech` responses left `processing` by a crash, at start-up and every five minutes. */
export function startStaleCopySweeper(services: { jobs: JobsStore; logger: Logger }): () => Promise<void> {
  const sweep = async () => {
    const now = Date.now();
    try {
      const failed = await services.jobs.failStaleCopies(new Date(now).toISOString(), new Date(now - LEGACY_STALE_COPY_MS).toISOString());
      if (failed > 0) services.logger.info('failed saved copies abandoned by a crashed process', { failed });
    } catch (err) {
      services.logger.warn('stale copy sweep failed; retrying later', { err: err as Error });
    }
  };
  void sweep();
  const timer = setInterval(() => void sweep(), SWEEP_EVERY_MS);
  timer.unref();
  return async () => clearInterval(timer);
}
