import type { PluginContext } from '../../core/plugin.ts';
import { validate } from '../../core/http/validate.ts';
import { TEXT_BODY_LIMIT } from '../../core/http/synthesis-fields.ts';
import { runIdempotent } from '../../core/http/idempotency.ts';
import { batchQuery, submitJobBody } from './schemas.ts';
import type { createJobsService } from './service.ts';

type JobsService = ReturnType<typeof createJobsService>;

export function registerJobRoutes(plugin: PluginContext, service: JobsService): void {
  plugin.route({
    method: 'POST', path: '/tts', auth: 'required', rateClass: 'speech', name: 'tts', tracked: true, jsonLimit: TEXT_BODY_LIMIT,
    handler: async (ctx) => {
      const auth = ctx.state.auth!;
      const idempotencyKey = ctx.get('idempotency-key') || undefined;
      if (idempotencyKey !== undefined) ctx.set('Idempotency-Key', idempotencyKey);
      const result = await runIdempotent(plugin.counters.idempotency, auth.keyId, idempotencyKey, ctx.request.body, async () => {
        const body = validate(submitJobBody, ctx.request.body);
        return service.submit(body, { auth, billing: ctx.state.billing, outcome: ctx.state.outcome });
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

  plugin.route({
    method: 'GET', path: '/tts/:jobId', auth: 'required', name: 'tts_get',
    handler: async (ctx) => {
      ctx.body = await service.getOne(ctx.params.jobId, ctx.state.auth!.accountId);
    },
  });

  plugin.route({
    method: 'GET', path: '/tts', auth: 'required', name: 'tts_batch',
    handler: async (ctx) => {
      const { ids } = validate(batchQuery, ctx.query) as unknown as { ids: string[] };
      ctx.body = await service.getMany(ids, ctx.state.auth!.accountId);
    },
  });
}
