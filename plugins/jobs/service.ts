import { createHash, randomUUID } from 'node:crypto';
import type { AuthContext } from '../../core/http/auth.ts';
import type { JobRecord, JobsStore } from '../../core/ports/jobs.ts';
import type { Blobs } from '../../core/ports/blobs.ts';
import type { VoiceCatalog } from '../../core/catalog.ts';
import type { DownloadLinks } from '../../core/downloads.ts';
import type { Publisher } from '../../core/services.ts';
import type { Config } from '../../config/load.ts';
import type { BillingService, RequestBilling } from '../../core/billing/service.ts';
import type { OutcomeAnnotation } from '../../core/http/outcome.ts';
import { TOPICS } from '../../core/ports/bus.ts';
import { DomainError } from '../../core/errors.ts';
import { enforceTestKeyWordCap } from '../../core/speechkit/text/word-cap.ts';
import { validateReadableText } from '../../core/speechkit/text/validation.ts';
import { countCharacters } from '../../core/billing/pricing.ts';
import { refineForRequest } from '../../core/speechkit/text/refine.ts';
import type { SubmitJobBody } from './schemas.ts';
import { jobView, JOB_LINK_TTL_SECONDS } from './view.ts';

export const QUEUE_RETRY_SECONDS = 15;

/** Identical requests share audio: same text, voice, speed, emotion and engine. */
export function cacheKeyOf(input: { text: string; voiceId: string; speed: number; emotion: string; engine: string }): string {
  return createHash('sha256')
    .update(JSON.stringify([input.engine, input.voiceId, input.speed, input.emotion, input.text.normalize('NFC')]))
    .digest('hex');
}

export interface SubmitContext {
  auth: AuthContext;
  billing: RequestBilling;
  outcome: OutcomeAnnotation;
}

/** The job logic of `POST /tts` and the polls; no Koa in here. */
/** The services the job routes use. */
export interface JobsDeps {
  jobs: JobsStore;
  catalog: VoiceCatalog;
  billing: BillingService;
  blobs: Blobs;
  downloads: DownloadLinks;
  publisher: Publisher;
  config: Config;
}

export function createJobsService(deps: JobsDeps) {
  const { jobs, catalog, publisher, downloads, config } = deps;

  async function queueInfo(job: JobRecord) {
    if (job.status !== 'queued') return null;
    const [position, renderMs] = await Promise.all([jobs.queuePosition(job.id), jobs.recentRenderMs()]);
    return { position, renderMs, concurrency: config.inference.concurrency };
  }

  return {
    async submit(body: SubmitJobBody, c: SubmitContext): Promise<{ status: number; body: Record<string, unknown> }> {
      enforceTestKeyWordCap(c.auth, body.text);
      validateReadableText(body.text);
      const engine = catalog.resolveEngine(body.engine);
      const voice = await catalog.resolve({ voice: body.voiceId, engine, accountId: c.auth.accountId, allowClones: true, param: 'voiceId' });
      Object.assign(c.outcome, { voice: voice.id, voiceName: voice.name, engine });
      if (body.aiRefine) refineForRequest(body.text, config.moderationTerms);

      // Queue limits come before billing: a queue-full refusal moves no money.
      if ((await jobs.countActive()) >= config.limits.queueMaxDepth) {
        throw new DomainError('limited', 'The job queue is full. Retry in 15 seconds; nothing was charged.', { code: 'QUEUE_FULL', retryAfterSeconds: QUEUE_RETRY_SECONDS });
      }
      if ((await jobs.countActiveByAccount(c.auth.accountId)) >= config.limits.userQueueMax) {
        throw new DomainError('limited', `Your account already has ${config.limits.userQueueMax} jobs queued. Retry in 15 seconds; nothing was charged.`, {
          code: 'USER_QUEUE_FULL', retryAfterSeconds: QUEUE_RETRY_SECONDS,
        });
      }

      const characters = countCharacters(body.text);
      const tokens = deps.billing.priceCharacters({ characters, engine, aiRefine: body.aiRefine });
      c.outcome.characters = characters;
      const cacheKey = cacheKeyOf({ text: body.text, voiceId: voice.id, speed: body.speed, emotion: body.emotion, engine });
      const cached = await jobs.findCached(cacheKey);
      const cachedPresent = cached && (await deps.blobs.exists(cached.audioKey)) ? cached : null;

      const charge = await c.billing.charge({ engine, tokens });
      const now = new Date().toISOString();
      const job: JobRecord = {
        id: 'job_' + randomUUID(), accountId: c.auth.accountId, keyId: c.auth.keyId, status: cachedPresent ? 'completed' : 'queued',
        source: 'tts', text: body.text, voiceId: voice.id, voiceName: voice.name, engine, emotion: body.emotion, speed: body.speed,
        aiRefine: body.aiRefine, textLength: characters, cacheKey, charge, audioKey: cachedPresent?.audioKey ?? null,
        durationSeconds: cachedPresent?.durationSeconds ?? null, processingMs: cachedPresent ? 0 : null, attempts: 0,
        leaseOwner: null, leaseUntil: null, errorCode: null, error: null, refunded: false, createdAt: now, startedAt: null,
        completedAt: cachedPresent ? now : null,
      };
      try {
        await jobs.create(job);
        if (!cachedPresent) await publisher.publish(TOPICS.jobs, [{ id: job.id, key: job.id, value: { jobId: job.id } }]);
      } catch (err) {
        // Accepted money must not vanish: if the job could not be recorded or queued, give it back.
        await c.billing.refund(charge);
        if (!cachedPresent) await jobs.fail(job.id, { errorCode: 'synthesis_unavailable', error: 'The job could not be queued.', completedAt: new Date().toISOString() }).catch(() => false);
        throw err;
      }
      c.outcome.jobId = job.id;
      if (cachedPresent) {
        c.outcome.cacheHit = true;
        c.outcome.audioSeconds = cachedPresent.durationSeconds;
        const link = downloads.sign(cachedPresent.audioKey, JOB_LINK_TTL_SECONDS);
        return {
          status: 201,
          body: {
            jobId: job.id, status: 'completed', message: 'The same audio was already rendered; it is ready to download.',
            audioUrl: link.url, audioUrlExpiresIn: link.expiresIn, duration: cachedPresent.durationSeconds,
          },
        };
      }
      c.outcome.queued = true;
      return { status: 201, body: { jobId: job.id, status: 'queued', message: 'Job queued. Poll GET /api/v1/tts/' + job.id + ' every 2 to 3 seconds.' } };
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
