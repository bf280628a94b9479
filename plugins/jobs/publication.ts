import type { JobsStore } from '../../core/ports/jobs.ts';
import type { Publisher } from '../../core/services.ts';
import type { Logger } from '../../core/logger.ts';
import { TOPICS } from '../../core/ports/bus.ts';
import { startRelayLoop, type PassOutcome } from '../../core/relay-loop.ts';

/**
 * Getting accepted jobs onto `tts.jobs`. A job is accepted together with its
 * publication pending (the outbox: a `tts_job_outbox` row on SQLite, the
 * job's `publishPending` flag on MongoDB); the message is published, then
 * the pending mark removed, so a crash in between publishes it twice at
 * worst (the render worker handles a job once whatever it receives).
 */

const message = (jobId: string) => ({ id: jobId, key: jobId, value: { jobId } });

/**
 * The fast path: publishes this process's accepted jobs right after they
 * commit, the jobs of one event-loop turn in one bus call and one write.
 * A failure is logged and left to the recovery below.
 */
export function createJobPublisher(deps: { jobs: JobsStore; publisher: Publisher; logger: Logger }) {
  let waiting: string[] = [];
  let flushing: Promise<void> | null = null;

  const flush = async () => {
    const ids = waiting;
    waiting = [];
    flushing = null;
    try {
      await deps.publisher.publish(TOPICS.jobs, ids.map(message));
      await deps.jobs.markPublished(ids);
    } catch (err) {
      deps.logger.warn('accepted jobs not published yet; the recovery publishes them', { jobs: ids.length, err: err as Error });
    }
  };

  return {
    /** resolves once the batch holding `jobId` was handed to the bus (or failed and was logged) */
    publish(jobId: string): Promise<void> {
      waiting.push(jobId);
      flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(flush);
      return flushing;
    },
  };
}

export interface RecoverySettings {
  intervalMs: number;
  /** a publication still pending after this long is redone (its process died before or while publishing) */
  republishAfterMs: number;
  /** a submission (MongoDB) still uncharged after this long is dropped */
  submissionTimeoutMs: number;
}

/**
 * Crash recovery, at start-up and every `intervalMs`: the store repairs
 * submissions cut short and queue counters (`jobs.repair`), then jobs whose
 * publication is still pending after `republishAfterMs` are published.
 */
export function startJobRecovery(deps: { jobs: JobsStore; publisher: Publisher; logger: Logger }, settings: RecoverySettings) {
  const BATCH = 500;
  const pass = async (): Promise<PassOutcome> => {
    const now = Date.now();
    const repaired = await deps.jobs.repair(new Date(now - settings.submissionTimeoutMs).toISOString(), new Date(now).toISOString());
    if (repaired.abandoned + repaired.healed > 0) deps.logger.warn('jobs repaired after a crash', repaired);
    const ids = await deps.jobs.unpublished(new Date(now - settings.republishAfterMs).toISOString(), BATCH);
    if (ids.length === 0) return 'idle';
    await deps.publisher.publish(TOPICS.jobs, ids.map(message));
    await deps.jobs.markPublished(ids);
    deps.logger.info('published jobs left unpublished by a stopped process', { jobs: ids.length });
    return ids.length === BATCH ? 'full' : 'some';
  };
  return startRelayLoop({ name: 'jobs recovery', intervalMs: settings.intervalMs, pass, logger: deps.logger });
}
