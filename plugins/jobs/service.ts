import { hash } from 'node:crypto';
import { timeOrderedUuid } from '../../core/ids.ts';
import type { AuthContext } from '../../core/http/auth.ts';
import type { JobRecord, JobsStore } from '../../core/ports/jobs.ts';
import type { Blobs } from '../../core/ports/blobs.ts';
import type { VoiceCatalog } from '../../core/catalog.ts';
import type { DownloadLinks } from '../../core/downloads.ts';
import type { Logger } from '../../core/logger.ts';
import type { Config } from '../../config/load.ts';
import type { BillingService, RequestBilling } from '../../core/billing/service.ts';
import type { OutcomeAnnotation } from '../../core/http/outcome.ts';
import { DomainError } from '../../core/errors.ts';
import { validateReadableText } from '../../core/speechkit/text/validation.ts';
import { preflightSynthesis } from '../../core/http/synthesis-preflight.ts';
import { refuseUnspeakable } from '../../core/speechkit/text/speech-text-request.ts';
import { inspectStoredAudio } from '../../core/speechkit/audio/stored.ts';
import type { SubmitJobBody } from './schemas.ts';
import { jobView, JOB_LINK_TTL_SECONDS } from './view.ts';
import { acceptedFromCache, type JobPublisher } from './publication.ts';
import { IdempotencyKeyTaken, type HeldAnswer, type IdempotencyClaim } from '../../core/http/idempotency.ts';

export const QUEUE_RETRY_SECONDS = 15;

function queueFull(which: 'depth' | 'account', perAccount: number): DomainError {
  if (which === 'depth') {
    return new DomainError('limited', 'The job queue is full. Retry in 15 seconds; nothing was charged.', { code: 'QUEUE_FULL', retryAfterSeconds: QUEUE_RETRY_SECONDS });
  }
  return new DomainError('limited', `Your account already has ${perAccount} jobs queued. Retry in 15 seconds; nothing was charged.`, {
    code: 'USER_QUEUE_FULL', retryAfterSeconds: QUEUE_RETRY_SECONDS,
  });
}

/**
 * Identical requests of one account share audio: same account, text, voice,
 * speed, emotion and engine, and the same `aiRefine`, which prepares the
 * text otherwise (formulas and symbols read out) and so is other audio. The
 * account is part of the key so that no tenant can learn, from an instant
 * `completed` or a link, that another one rendered a text; the cost is one
 * render per account and text. `v2`: keys before it left `aiRefine` out, so
 * their entries may hold either preparation and are not read.
 */
export function cacheKeyOf(input: { accountId: string; text: string; voiceId: string; speed: number; emotion: string; engine: string; aiRefine: boolean }): string {
  return hash('sha256', JSON.stringify(['v2', input.accountId, input.engine, input.voiceId, input.speed, input.emotion, input.aiRefine, input.text.normalize('NFC')]));
}

export interface SubmitContext {
  auth: AuthContext;
  billing: RequestBilling;
  outcome: OutcomeAnnotation;
}

/** The services the job routes use. */
export interface JobsDeps {
  jobs: JobsStore;
  catalog: VoiceCatalog;
  billing: BillingService;
  blobs: Blobs;
  downloads: DownloadLinks;
  /** publishes accepted jobs on `tts.jobs` and clears their outbox mark (publication.ts) */
  jobPublisher: Pick<JobPublisher, 'accepted'>;
  config: Config;
  logger: Logger;
}

const RENDER_ESTIMATE_MS = 5000;

export function createJobsService(deps: JobsDeps) {
  const { jobs, catalog, downloads, config } = deps;

  /** A cache hit is served (and charged) only when its file is intact; a damaged one is rendered afresh. */
  async function usableCachedAudio(cacheKey: string) {
    const cached = await jobs.findCached(cacheKey);
    if (!cached || !(cached.durationSeconds > 0)) return null;
    const state = await inspectStoredAudio(deps.blobs, cached.audioKey);
    if (state === 'corrupt') deps.logger.warn('cached audio is damaged; rendering afresh', { audioKey: cached.audioKey });
    return state === 'ok' ? cached : null;
  }

  // The recent render time only feeds an estimate: read once per RENDER_ESTIMATE_MS per process, not on every poll.
  let renderEstimate: { ms: Promise<number | null>; until: number } | null = null;
  function recentRenderMs(): Promise<number | null> {
    const now = Date.now();
    if (!renderEstimate || renderEstimate.until <= now) {
      const ms = jobs.recentRenderMs();
      renderEstimate = { ms, until: now + RENDER_ESTIMATE_MS };
      ms.catch(() => { renderEstimate = null; });
    }
    return renderEstimate.ms;
  }

  /** The answer `POST /tts` gave when it accepted `job`: completed at once from the cache (a job that never started), else queued. */
  function acceptedAnswer(job: JobRecord): { status: number; body: Record<string, unknown> } {
    if (acceptedFromCache(job) && job.audioKey !== null) {
      const link = downloads.sign(job.audioKey, JOB_LINK_TTL_SECONDS, { job: job.id });
      return {
        status: 201,
        body: {
          jobId: job.id, status: 'completed', message: 'The same audio was already rendered; it is ready to download.',
          audioUrl: link.url, audioUrlExpiresIn: link.expiresIn, duration: job.durationSeconds,
        },
      };
    }
    return { status: 201, body: { jobId: job.id, status: 'queued', message: 'Job queued. Poll GET /api/v1/tts/' + job.id + ' every 2 to 3 seconds.' } };
  }

  async function queueInfo(job: JobRecord) {
    if (job.status !== 'queued') return null;
    const [position, renderMs] = await Promise.all([jobs.queuePosition(job.id), recentRenderMs()]);
    return { position, renderMs, concurrency: config.inference.concurrency };
  }

  return {
    /** `claim`: the request's Idempotency-Key, recorded with the job it accepts (one job per key). */
    async submit(body: SubmitJobBody, c: SubmitContext, claim: IdempotencyClaim | null = null): Promise<{ status: number; body: Record<string, unknown> }> {
      validateReadableText(body.text);
      const engine = catalog.resolveEngine(body.engine);
      const voice = await catalog.resolve({ voice: body.voiceId, engine, accountId: c.auth.accountId, allowClones: true, param: 'voiceId' });
      Object.assign(c.outcome, { voice: voice.id, voiceName: voice.name, engine });
      // Cheap refusals first (word cap, a payer that cannot pay at all), before any preparation work.
      const { characters, tokens, grants } = await preflightSynthesis(deps.billing, c.auth, { text: body.text, engine, aiRefine: body.aiRefine, param: 'text' });
      c.outcome.characters = characters;

      // The worker prepares the text when it renders; here only its verdict is asked for, to refuse before
      // billing text with nothing to speak, text that reads far longer than it bills, and (aiRefine) moderated text.
      await refuseUnspeakable({ text: body.text, aiRefine: body.aiRefine, moderationTerms: config.moderationTerms, sourceCharacters: characters, param: 'text' });

      const cacheKey = cacheKeyOf({ accountId: c.auth.accountId, text: body.text, voiceId: voice.id, speed: body.speed, emotion: body.emotion, engine, aiRefine: body.aiRefine });
      const cachedPresent = await usableCachedAudio(cacheKey);

      const now = new Date().toISOString();
      const job: JobRecord = {
        id: 'job_' + timeOrderedUuid(), accountId: c.auth.accountId, keyId: c.auth.keyId, status: cachedPresent ? 'completed' : 'queued',
        source: 'tts', text: body.text, voiceId: voice.id, voiceName: voice.name, engine, emotion: body.emotion, speed: body.speed,
        aiRefine: body.aiRefine, textLength: characters, cacheKey, charge: null, audioKey: cachedPresent?.audioKey ?? null,
        durationSeconds: cachedPresent?.durationSeconds ?? null, processingMs: cachedPresent ? 0 : null, attempts: 0,
        leaseOwner: null, leaseUntil: null, errorCode: null, error: null, refunded: false, createdAt: now, startedAt: null,
        completedAt: cachedPresent ? now : null,
      };
      // One write accepts it: the queue limits (a queued job only), the charge, the job and its publication.
      const submission = jobs.submission(job, { maxDepth: config.limits.queueMaxDepth, perAccount: config.limits.userQueueMax }, claim ?? undefined);
      try {
        job.charge = await c.billing.charge({
          engine, tokens, grants,
          write: async (cmd, charge) => {
            const written = await submission.write(cmd, charge);
            if ('queueFull' in written) throw queueFull(written.queueFull, config.limits.userQueueMax);
            if ('keyTaken' in written) throw new IdempotencyKeyTaken();
            return written;
          },
        });
      } catch (err) {
        await submission.abandon().catch((cause: unknown) => deps.logger.warn('a refused submission was not cleaned up; the jobs recovery will', { jobId: job.id, err: cause as Error }));
        throw err;
      }
      // Published after the answer; shutdown waits for it (the outcome's pending work), a crash leaves it to the recovery.
      deps.jobPublisher.accepted(job, c.outcome);
      return acceptedAnswer(job);
    },

    /** The answer of the submission accepted under an Idempotency-Key, from the jobs store. */
    async heldAnswer(claim: IdempotencyClaim): Promise<HeldAnswer> {
      const held = await jobs.acceptedWithKey(claim.key, claim.keptSince);
      if (held === null || held === 'pending') return held;
      return { fingerprint: held.fingerprint, response: acceptedAnswer(held.job) };
    },

    /** A recorded answer replayed: a cache hit's link is signed again (it was valid 24 hours from the first answer). */
    async replayAnswer(recorded: { status: number; body: unknown }, accountId: string): Promise<{ status: number; body: unknown }> {
      const { jobId, status } = (recorded.body ?? {}) as { jobId?: unknown; status?: unknown };
      if (status !== 'completed' || typeof jobId !== 'string') return recorded;
      const job = await jobs.get(jobId);
      return job && job.accountId === accountId ? acceptedAnswer(job) : recorded;
    },

    async getOne(jobId: string, accountId: string): Promise<Record<string, unknown>> {
      const job = await jobs.get(jobId);
      if (!job || job.accountId !== accountId) throw new DomainError('not_found', `Job ${jobId} not found.`, { code: 'JOB_NOT_FOUND' });
      return jobView(job, downloads, await queueInfo(job));
    },

    async getMany(ids: string[], accountId: string): Promise<{ jobs: Record<string, unknown>[]; missing: string[] }> {
      const found = new Map((await jobs.getMany(ids)).filter((j) => j.accountId === accountId).map((j) => [j.id, j]));
      const views: Record<string, unknown>[] = [];
      const missing: string[] = [];
      for (const id of ids) {
        const job = found.get(id);
        if (job) views.push(jobView(job, downloads, await queueInfo(job)));
        else missing.push(id);
      }
      return { jobs: views, missing };
    },
  };
}
