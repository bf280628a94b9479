import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import type { Subscription } from '../core/ports/bus.ts';
import { TOPICS } from '../core/ports/bus.ts';
import type { JobRecord } from '../core/ports/jobs.ts';
import type { Config } from '../config/load.ts';
import type { Bus } from '../core/ports/bus.ts';
import type { JobsStore } from '../core/ports/jobs.ts';
import type { Blobs } from '../core/ports/blobs.ts';
import type { SpeechEngine } from '../core/ports/engine.ts';
import type { BillingService } from '../core/billing/service.ts';
import type { VoiceCatalog } from '../core/catalog.ts';
import type { Logger } from '../core/logger.ts';
import type { Metrics } from '../core/metrics.ts';
import type { Lifecycle } from '../core/services.ts';
import { jobEventId, type JobEvent, type JobFailedEvent } from '../core/ports/job-events.ts';
import { renderJobToBlob, classifyRenderError } from './render.ts';
import { pauseUnlessAborted } from '../core/speechkit/abort.ts';

/**
 * The inference consumer group: takes `tts.jobs`, renders with the engine
 * port, stores the WAV in the blobs port and publishes `tts.job.events`.
 * A job is claimed under a lease renewed while rendering, so a worker that
 * dies leaves a job that another worker claims once the lease lapses; a job
 * completes once, is charged once and refunded at most once, whatever the
 * bus redelivers.
 */
export interface WorkerOptions {
  concurrency: number;
  maxAttempts: number;
  leaseSeconds?: number;
  retryBaseMs?: number;
}

class LeaseHeldError extends Error {
  constructor(jobId: string) {
    super(`job ${jobId} is being rendered by another worker`);
  }
}

/** A render cut by shutdown: its job went back to the queue and its message stays uncommitted. */
class HandedBack extends Error {
  constructor(jobId: string) {
    super(`job ${jobId} was handed back: the worker is shutting down`);
  }
}

/** Renders still running this long before the shutdown deadline are cut and handed back. */
const HAND_BACK_MARGIN_MS = 2000;

/** The services the worker uses. */
export interface WorkerDeps {
  config: Config;
  jobs: JobsStore;
  bus: Bus;
  blobs: Blobs;
  engine: SpeechEngine;
  billing: BillingService;
  catalog: VoiceCatalog;
  logger: Logger;
  metrics: Metrics;
  lifecycle: Lifecycle;
}

/** Longest wait between tries of a job whose audio store is out of reach. */
const OUTAGE_RETRY_CAP_MS = 30_000;

export async function startInferenceWorker(services: WorkerDeps, options: WorkerOptions): Promise<Subscription> {
  // The lease owner names the host and process, so an operator (or a test) can tell who holds a job.
  const owner = `worker_${hostname()}_${process.pid}_${randomUUID().slice(0, 8)}`;
  const leaseMs = (options.leaseSeconds ?? 30) * 1000;
  const retryBaseMs = options.retryBaseMs ?? 1000;
  const { jobs, bus, metrics, logger } = services;
  // Both series exist from the start, so dashboards and alerts see 0 rather than nothing.
  for (const status of ['completed', 'failed']) metrics.jobsFinished.inc({ status }, 0);
  // Fires shortly before the shutdown deadline: renders still running give their job back.
  const handBack = new AbortController();
  // Each render in flight links to it until it ends (INFERENCE_CONCURRENCY of them, up to 64): not a leak.
  setMaxListeners(0, handBack.signal);
  const pause = (ms: number) => pauseUnlessAborted(ms, handBack.signal);

  const publish = (event: JobEvent) => bus.publish(TOPICS.jobEvents, [{ id: event.eventId, key: event.jobId, value: event }]);

  const completedEvent = (job: JobRecord): JobEvent => ({
    type: 'tts.job.completed', eventId: jobEventId(job.id, 'tts.job.completed'), jobId: job.id, accountId: job.accountId, keyId: job.keyId,
    voiceId: job.voiceId, engine: job.engine, characterCount: job.textLength, tokenCost: job.charge?.tokens ?? 0, at: job.completedAt ?? new Date().toISOString(),
    durationSeconds: job.durationSeconds ?? 0, processingTimeMs: job.processingMs ?? 0, audioKey: job.audioKey!,
  });

  const failedEvent = (job: JobRecord, refunded: boolean): JobFailedEvent => ({
    type: 'tts.job.failed', eventId: jobEventId(job.id, 'tts.job.failed'), jobId: job.id, accountId: job.accountId, keyId: job.keyId,
    voiceId: job.voiceId, engine: job.engine, characterCount: job.textLength, tokenCost: job.charge?.tokens ?? 0, at: job.completedAt ?? new Date().toISOString(),
    error: { code: (job.errorCode ?? 'synthesis_failed') as JobFailedEvent['error']['code'], message: job.error ?? 'Synthesis failed' }, refunded,
  });

  /** Refund once (idempotent per charge), then announce the failure. Safe to repeat after a crash. */
  async function settleFailure(jobId: string): Promise<void> {
    const job = (await jobs.get(jobId))!;
    // Another worker completed it (our lease had lapsed): it was delivered, nothing to give back.
    if (job.status !== 'failed') return;
    let refunded = job.refunded;
    if (job.charge && !job.refunded) {
      await services.billing.refund(job.charge);
      await jobs.markRefunded(job.id);
      refunded = true;
    }
    await publish(failedEvent(job, refunded));
    metrics.jobsFinished.inc({ status: 'failed' });
  }

  async function render(job: JobRecord): Promise<void> {
    const renewer = setInterval(() => {
      void jobs.renewLease(job.id, owner, new Date(Date.now() + leaseMs).toISOString()).catch(() => undefined);
    }, Math.max(250, leaseMs / 3));
    try {
      for (let attempt = 1, outages = 0; ; attempt++) {
        const started = performance.now();
        const audioKey = `jobs/${job.id}.wav`;
        let audio: Awaited<ReturnType<typeof renderJobToBlob>>;
        try {
          audio = await renderJobToBlob(services, job, audioKey, { signal: handBack.signal });
        } catch (err) {
          if (handBack.signal.aborted) {
            await jobs.release(job.id, owner, 'interrupted by shutdown');
            throw new HandedBack(job.id);
          }
          const failure = classifyRenderError(err);
          if (failure.outage) {
            // A storage outage of a few seconds (a MongoDB election, a full disk) used to fail and refund every job
            // rendering meanwhile after JOB_MAX_ATTEMPTS quick tries. It is waited out instead: the lease renewer
            // keeps the job, and shutdown still hands it back.
            outages++;
            logger.warn('job waits for its audio store', { jobId: job.id, outages, err: err as Error });
            await pause(Math.min(retryBaseMs * 2 ** (outages - 1), OUTAGE_RETRY_CAP_MS));
            attempt--;
            continue;
          }
          const total = job.attempts + attempt - 1;
          if (!failure.retryable || total >= options.maxAttempts) {
            logger.warn('job failed permanently', { jobId: job.id, attempts: total, code: failure.code, err: err as Error });
            await jobs.fail(job.id, { errorCode: failure.code, error: failure.message, completedAt: new Date().toISOString() });
            await settleFailure(job.id);
            return;
          }
          logger.info('job attempt failed; retrying', { jobId: job.id, attempt: total, err: err as Error });
          await pause(retryBaseMs * 2 ** (attempt - 1));
          continue;
        }
        // Rendered. A failure from here on (the store or the bus out of reach) is not the render's: it
        // leaves the message uncommitted, and the redelivery repeats the (idempotent) announcement.
        const processingMs = Math.round(performance.now() - started);
        const completedAt = new Date().toISOString();
        if (await jobs.complete(job.id, { audioKey, durationSeconds: audio.durationSeconds, processingMs, completedAt })) {
          await jobs.putCached(job.cacheKey, { audioKey, durationSeconds: audio.durationSeconds });
        }
        const done = (await jobs.get(job.id))!;
        if (done.status === 'completed') {
          await publish(completedEvent(done));
          metrics.jobsFinished.inc({ status: 'completed' });
        }
        return;
      }
    } finally {
      clearInterval(renewer);
    }
  }

  const subscription = await bus.subscribe<{ jobId: string }>({
    topic: TOPICS.jobs,
    group: 'inference',
    concurrency: options.concurrency,
    // Lease conflicts retry until the dead worker's lease lapses.
    maxAttempts: 50,
    handler: async (message) => {
      const jobId = message.value.jobId;
      const current = await jobs.get(jobId);
      if (!current) return;
      // Redelivered after the job ended: repeat the (idempotent) announcement and move on.
      if (current.status === 'completed') return void (await publish(completedEvent(current)));
      if (current.status === 'failed') return void (await settleFailure(jobId));
      const now = new Date();
      const claimed = await jobs.claim(jobId, owner, new Date(now.getTime() + leaseMs).toISOString(), now.toISOString());
      if (!claimed) throw new LeaseHeldError(jobId);
      await render(claimed);
    },
  });

  return {
    /** Stops taking jobs; renders in flight finish, or are handed back just before the shutdown deadline. */
    async stop() {
      const deadline = services.lifecycle.deadline();
      const timer = deadline === null ? null : setTimeout(() => handBack.abort(), Math.max(0, deadline - Date.now() - HAND_BACK_MARGIN_MS));
      try {
        await subscription.stop();
      } finally {
        if (timer) clearTimeout(timer);
      }
    },
  };
}
