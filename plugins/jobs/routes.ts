import type { RouteRegistrar } from '../../core/plugin.ts';
import type { IdempotencyStore } from '../../core/ports/counters.ts';
import { runIdempotent } from '../../core/http/idempotency.ts';
import type { Logger } from '../../core/logger.ts';
import { TEXT_BODY_LIMIT } from '../../core/http/synthesis-fields.ts';
import Joi from 'joi';
import { batchQuery, batchResponse, cloneRefusalFields, jobResponse, submitJobBody, submitJobResponse, type SubmitJobBody } from './schemas.ts';
import type { createJobsService } from './service.ts';

type JobsService = ReturnType<typeof createJobsService>;

/** The handler echoes the key first thing, so every answer from it carries it; a refusal before the handler (401, 413, 415, validation, the rate limit) does not. */
const idempotencyEcho = { 'Idempotency-Key': 'echoes the request\'s Idempotency-Key, as sent (also on a refusal of the handler, an invalid key included)' };

export function registerJobRoutes(route: RouteRegistrar, idempotency: IdempotencyStore, service: JobsService, logger: Pick<Logger, 'warn'>): void {
  route<SubmitJobBody, unknown>({
    method: 'POST', path: '/tts', auth: 'required', rateClass: 'speech', name: 'tts', tracked: true, jsonLimit: TEXT_BODY_LIMIT,
    summary: 'Submit a speech job',
    description: 'Charged up front; refunded if the job fails. Identical text, voice, speed, emotion and engine of the same account is a cache hit: `completed` at once, charged. Completion is reported by polling or by webhook.',
    request: { body: submitJobBody },
    requestHeaders: {
      'Idempotency-Key': { description: '8 to 128 printable ASCII characters without whitespace, kept 24 hours per key: a replay returns the original answer and charges nothing', schema: Joi.string().min(8).max(128) },
    },
    responses: {
      201: {
        description: 'Queued, or completed at once from the cache',
        schema: submitJobResponse,
        headers: {
          ...idempotencyEcho,
          'Idempotent-Replayed': '`true` when this is the stored answer of an earlier request with the same key',
        },
      },
      400: {
        description: '`VOICE_NOT_FOUND` (an unknown voice, or a clone that is not yours), `VOICE_ENGINE_MISMATCH` (a voice of another engine), `VOICE_AMBIGUOUS` (several of your clones have that name), '
          + '`CLONE_UNAVAILABLE` (the clone\'s reference recording was removed), `CLONE_ENGINE_RETIRED` (with `engine`), `ENGINE_RETIRED`, `UNKNOWN_ENGINE`, `IDEMPOTENCY_KEY_INVALID`; text too long or unreadable',
        schema: cloneRefusalFields, headers: idempotencyEcho,
      },
      403: { description: 'The grant cannot pay: `GRANT_TOKENS_EXHAUSTED`, `GRANT_EXPIRED`, `GRANT_INACTIVE`, `PLAN_ENGINE_NOT_INCLUDED`', headers: idempotencyEcho },
      409: { description: '`IDEMPOTENCY_IN_FLIGHT`: the first request with this key is still running; retry in 1 second with the same key', headers: idempotencyEcho },
      422: { description: '`CONTENT_REJECTED` (moderation, only with aiRefine) or `IDEMPOTENCY_KEY_REUSED`', headers: idempotencyEcho },
      429: { description: '`GRANT_DAILY_LIMIT`, `GRANT_WEEKLY_LIMIT` (with `resetAt`), `CONCURRENT_CONFLICT`, `QUEUE_FULL`, `USER_QUEUE_FULL` (nothing charged)', headers: idempotencyEcho },
      500: { description: 'The job could not be accepted; nothing was charged, or what was charged is refunded', headers: idempotencyEcho },
      503: { description: 'Too many long texts are being prepared right now, or `IDEMPOTENCY_UNAVAILABLE`: the Idempotency-Key cannot be checked while the counters store is unreachable (`Retry-After: 5`); retry shortly, nothing was charged', headers: idempotencyEcho },
    },
    handler: async (ctx, { body }) => {
      const auth = ctx.state.auth!;
      // Present but empty is a key that came out empty in the client: refused (runIdempotent), not run as if absent.
      const sent = ctx.req.headers['idempotency-key'];
      const idempotencyKey = sent === undefined ? undefined : String(sent);
      if (idempotencyKey !== undefined) ctx.set('Idempotency-Key', idempotencyKey);
      // The fingerprint is of the body as sent, so a replay matches whatever defaults apply.
      const result = await runIdempotent(idempotency, auth.keyId, idempotencyKey, ctx.request.body, (claim) =>
        service.submit(body, { auth, billing: ctx.state.billing, outcome: ctx.state.outcome }, claim), {
        heldAnswer: (claim) => service.heldAnswer(claim),
        replay: (recorded) => service.replayAnswer(recorded, auth.accountId),
        onStoreError: (err) => logger.warn('the idempotency record was not saved; a retry with this key is answered from the job it accepted', { err: err as Error }),
      });
      if (result.replayed) {
        ctx.set('Idempotent-Replayed', 'true');
        // A replay charges nothing and is not a new request in usage.
        ctx.state.outcome.skip = true;
      }
      ctx.status = result.response.status;
      ctx.body = result.response.body;
    },
  });

  route({
    method: 'GET', path: '/tts/:jobId', auth: 'required', name: 'tts_get', summary: 'Poll one job',
    description: 'Poll every 2 to 3 seconds until `completed` or `failed`; a failed job answers 200 with status `failed`. Not throttled.',
    responses: {
      200: { description: 'The job', schema: jobResponse },
      404: { description: '`JOB_NOT_FOUND`: no such job, or another account\'s' },
    },
    handler: async (ctx) => {
      ctx.body = await service.getOne(ctx.params.jobId, ctx.state.auth!.accountId);
    },
  });

  route<unknown, { ids: string[] }>({
    method: 'GET', path: '/tts', auth: 'required', name: 'tts_batch', summary: 'Poll up to 50 jobs',
    description: 'Each entry has the shape of the single poll; ids that are unknown or not yours are listed in `missing`. Not throttled.',
    request: { query: batchQuery },
    responses: { 200: { description: 'The jobs found and the ids missing', schema: batchResponse } },
    handler: async (ctx, { query }) => {
      ctx.body = await service.getMany(query.ids, ctx.state.auth!.accountId);
    },
  });
}
