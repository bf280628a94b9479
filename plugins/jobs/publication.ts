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
 * is removed only once both are out (the message on the bus, the outcome on
 * the bus or kept by core's spill), so a crash in between publishes them
 * again at worst: the render worker handles a job once whatever it
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
 * pending marks removed once the request's outcome is out too, in one
 * write per turn. A failure is logged and left to the recovery below.
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
  /** a job whose publication is still pending after this long has its message published again (its process died before or while publishing) */
  republishAfterMs: number;
  /**
   * After this long its accept's outcome event is published again too, and
   * the publication is done. It is longer than the bus's publish deadline
   * (120 s): by then a live process has its accept's outcome on the bus or
   * in the spill (core/bus-spill.ts), so a bus outage does not have the
   * event published a second time.
   */
  outcomeAfterMs: number;
  /** a submission (MongoDB) still uncharged after this long is dropped */
  submissionTimeoutMs: number;
}

/**
 * Crash recovery, at start-up and every `intervalMs`: the store repairs
 * submissions cut short and queue counters (`jobs.repair`); then each job
 * whose publication is still pending after `republishAfterMs` and still
 * waits to be rendered is handed over again (once per process), and after
 * `outcomeAfterMs` its accept's outcome event is published and its
 * publication marked done.
 */
export function startJobRecovery(deps: { jobs: JobsStore; publisher: Publisher; logger: Logger }, settings: RecoverySettings) {
  const BATCH = 500;
  // Jobs this process handed over whose outcome is not due yet: their message is not sent again at every pass.
  let handedOver = new Set<string>();
  const pass = async (): Promise<PassOutcome> => {
    const now = Date.now();
    const repaired = await deps.jobs.repair(new Date(now - settings.submissionTimeoutMs).toISOString(), new Date(now).toISOString());
    if (repaired.abandoned + repaired.healed > 0) deps.logger.warn('jobs repaired after a crash', repaired);
    const ids = await deps.jobs.unpublished(new Date(now - settings.republishAfterMs).toISOString(), BATCH);
    // What is no longer pending (its own process finished it) is forgotten.
    if (ids.length < BATCH) handedOver = new Set(ids.filter((id) => handedOver.has(id)));
    if (ids.length === 0) return 'idle';
    const jobs = await deps.jobs.getMany(ids);
    const toRender = jobs.filter((job) => (job.status === 'queued' || job.status === 'processing') && !handedOver.has(job.id));
    if (toRender.length > 0) {
      await deps.publisher.publish(TOPICS.jobs, toRender.map((job) => jobMessage(job.id)));
      for (const job of toRender) handedOver.add(job.id);
      deps.logger.info('handed over jobs left unpublished by a stopped process', { jobs: toRender.length });
    }
    const dueBefore = now - Math.max(settings.outcomeAfterMs, settings.republishAfterMs);
    const found = new Set(jobs.map((job) => job.id));
    const due = jobs.filter((job) => Date.parse(job.createdAt) <= dueBefore);
    const accepts = due.flatMap((job) => {
      if (!job.charge) return [];
      const event = acceptOutcomeEvent({ ...job, charge: job.charge });
      return [{ id: event.id, key: job.accountId, value: event }];
    });
    if (accepts.length > 0) await deps.publisher.publish(TOPICS.outcomes, accepts);
    // A job gone from the store has nothing left to publish.
    const done = [...due.map((job) => job.id), ...ids.filter((id) => !found.has(id))];
    if (done.length === 0) return 'some';
    await deps.jobs.markPublished(done);
    for (const id of done) handedOver.delete(id);
    if (accepts.length > 0) deps.logger.info('published the outcome events of accepts a stopped process left unpublished', { jobs: accepts.length });
    return done.length === BATCH ? 'full' : 'some';
  };
  return startRelayLoop({ name: 'jobs recovery', intervalMs: settings.intervalMs, pass, logger: deps.logger });
}
