import type { RouteRegistrar } from '../../core/plugin.ts';
import type { IdempotencyStore } from '../../core/ports/counters.ts';
import { runIdempotent } from '../../core/http/idempotency.ts';
import { TEXT_BODY_LIMIT } from '../../core/http/synthesis-fields.ts';
import { batchQuery, submitJobBody, type SubmitJobBody } from './schemas.ts';
import type { createJobsService } from './service.ts';

type JobsService = ReturnType<typeof createJobsService>;

export function registerJobRoutes(route: RouteRegistrar, idempotency: IdempotencyStore, service: JobsService): void {
  route<SubmitJobBody, unknown>({
    method: 'POST', path: '/tts', auth: 'required', rateClass: 'speech', name: 'tts', tracked: true, jsonLimit: TEXT_BODY_LIMIT,
    summary: 'Submit a speech job',
    request: { body: submitJobBody },
    handler: async (ctx, { body }) => {
      const auth = ctx.state.auth!;
      const idempotencyKey = ctx.get('idempotency-key') || undefined;
      if (idempotencyKey !== undefined) ctx.set('Idempotency-Key', idempotencyKey);
      // The fingerprint is of the body as sent, so a replay matches whatever defaults apply.
      const result = await runIdempotent(idempotency, auth.keyId, idempotencyKey, ctx.request.body, () =>
        service.submit(body, { auth, billing: ctx.state.billing, outcome: ctx.state.outcome }));
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
    handler: async (ctx) => {
      ctx.body = await service.getOne(ctx.params.jobId, ctx.state.auth!.accountId);
    },
  });

  route<unknown, { ids: string[] }>({
    method: 'GET', path: '/tts', auth: 'required', name: 'tts_batch', summary: 'Poll up to 50 jobs',
    request: { query: batchQuery },
    handler: async (ctx, { query }) => {
      ctx.body = await service.getMany(query.ids, ctx.state.auth!.accountId);
    },
  });
}
