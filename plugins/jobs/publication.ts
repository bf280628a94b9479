import type { JobRecord, JobsStore } from '../../core/ports/jobs.ts';
import type { Publisher } from '../../core/services.ts';
import type { Logger } from '../../core/logger.ts';
import type { OutcomeEvent } from '../../core/ports/analytics.ts';
import { TOPICS } from '../../core/ports/bus.ts';
import { buildOutcomeEvent, newOutcome, type OutcomeAnnotation } from '../../core/http/outcome.ts';
import { startRelayLoop, type PassOutcome } from '../../core/relay-loop.ts';
import { perTurn } from '../../core/per-turn.ts';

/**
 * A job's publication: its `tts.jobs` message (a queued job) and the
 * outcome event of the `POST /tts` that accepted it. A job is accepted
 * together with its publication pending (the outbox: a `tts_job_outbox` row
 * on SQLite, the job's `publishPending` flag on MongoDB); the pending mark
 * is removed only once both are on the bus, so a crash in between publishes
 * them again at worst: the render worker handles a job once whatever it
 * receives, and the outcome rebuilt from the job has the request's own id
 * and time, so usage keeps one.
 */

const jobMessage = (jobId: string) => ({ id: jobId, key: jobId, value: { jobId } });

/** A job `POST /tts` answered `completed` from the content cache: it never started. */
export const acceptedFromCache = (job: JobRecord): boolean => job.status === 'completed' && job.startedAt === null;

/**
 * What an accepted submission's outcome says of it, all of it kept with the
 * job: the request annotates its outcome with this, and the recovery builds
 * the same event from the stored job.
 */
export function annotateAccept(outcome: OutcomeAnnotation, job: JobRecord): void {
  Object.assign(outcome, { voice: job.voiceId, voiceName: job.voiceName, engine: job.engine, characters: job.textLength, jobId: job.id, at: job.createdAt });
  if (acceptedFromCache(job)) {
    outcome.cacheHit = true;
    outcome.audioSeconds = job.durationSeconds ?? 0;
  } else {
    outcome.queued = true;
  }
}

/** The outcome event of the request that accepted `job` (charged, so its charge names the request and route). */
export function acceptOutcomeEvent(job: JobRecord & { charge: NonNullable<JobRecord['charge']> }): OutcomeEvent {
  const outcome = newOutcome(job.charge.route, true);
  annotateAccept(outcome, job);
  outcome.tokensCharged = job.charge.tokens;
  outcome.grantId = job.charge.grantId;
  return buildOutcomeEvent({ requestId: job.charge.requestId ?? job.id, accountId: job.accountId, keyId: job.keyId, status: 201, outcome, errorCode: null });
}

/**
 * The fast path: this process's accepted jobs are published right after
 * they commit, the jobs of one event-loop turn in one bus call, and their
 * pending marks removed once the request's outcome is on the bus too, in
 * one write per turn. A failure is logged and left to the recovery below.
 */
export function createJobPublisher(deps: { jobs: JobsStore; publisher: Publisher; logger: Logger }) {
  /** resolves whether the batch holding the job reached the bus */
  const publish = perTurn(async (ids: string[]) => {
    try {
      await deps.publisher.publish(TOPICS.jobs, ids.map(jobMessage));
      return ids.map(() => true);
    } catch (err) {
      deps.logger.warn('accepted jobs not published yet; the recovery publishes them', { jobs: ids.length, err: err as Error });
      return ids.map(() => false);
    }
  });
  const markPublished = perTurn(async (ids: string[]) => {
    try {
      await deps.jobs.markPublished(ids);
    } catch (err) {
      deps.logger.warn('published jobs not marked yet; the recovery publishes them again', { jobs: ids.length, err: err as Error });
    }
    return ids.map(() => undefined);
  });
  return {
    /**
     * `job` was accepted (and charged) by the request `outcome` annotates:
     * its message goes out before the outcome (the outcome's pending work;
     * shutdown waits for it), and its pending mark goes once both are out.
     */
    accepted(job: JobRecord, outcome: OutcomeAnnotation): void {
      annotateAccept(outcome, job);
      const published = acceptedFromCache(job) ? Promise.resolve(true) : publish(job.id);
      outcome.pending.push(published);
      outcome.afterPublished.push(async () => {
        if (await published) await markPublished(job.id);
      });
    },
  };
}

export type JobPublisher = ReturnType<typeof createJobPublisher>;

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
 * publication is still pending after `republishAfterMs` are published: the
 * message of each that still waits to be rendered, and the outcome event of
 * each one's accept.
 */
export function startJobRecovery(deps: { jobs: JobsStore; publisher: Publisher; logger: Logger }, settings: RecoverySettings) {
  const BATCH = 500;
  const pass = async (): Promise<PassOutcome> => {
    const now = Date.now();
    const repaired = await deps.jobs.repair(new Date(now - settings.submissionTimeoutMs).toISOString(), new Date(now).toISOString());
    if (repaired.abandoned + repaired.healed > 0) deps.logger.warn('jobs repaired after a crash', repaired);
    const ids = await deps.jobs.unpublished(new Date(now - settings.republishAfterMs).toISOString(), BATCH);
    if (ids.length === 0) return 'idle';
    const jobs = await deps.jobs.getMany(ids);
    // A job that has ended needs no render; one still queued or processing is handed over again.
    const toRender = jobs.filter((job) => job.status === 'queued' || job.status === 'processing');
    if (toRender.length > 0) await deps.publisher.publish(TOPICS.jobs, toRender.map((job) => jobMessage(job.id)));
    const accepts = jobs.flatMap((job) => {
      if (!job.charge) return [];
      const event = acceptOutcomeEvent({ ...job, charge: job.charge });
      return [{ id: event.id, key: job.accountId, value: event }];
    });
    if (accepts.length > 0) await deps.publisher.publish(TOPICS.outcomes, accepts);
    await deps.jobs.markPublished(ids);
    deps.logger.info('published jobs left unpublished by a stopped process', { jobs: ids.length });
    return ids.length === BATCH ? 'full' : 'some';
  };
  return startRelayLoop({ name: 'jobs recovery', intervalMs: settings.intervalMs, pass, logger: deps.logger });
}
