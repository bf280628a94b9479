import type { PluginContext, RouteDefinition } from '../../core/plugin.ts';
import { validate } from '../../core/http/validate.ts';
import { createWebhookBody, deliveriesQuery } from './schemas.ts';
import type { WebhookService } from './service.ts';

/** SPEC allows 10 to 30 per minute for webhook management; counted per key and per operation. */
export const WEBHOOK_ROUTES_PER_MINUTE = 20;

export function registerWebhookRoutes(plugin: Pick<PluginContext, 'route'>, service: WebhookService): void {
  const route = (def: Omit<RouteDefinition, 'auth' | 'perMinute' | 'tracked'>) =>
    plugin.route({ ...def, auth: 'required', perMinute: WEBHOOK_ROUTES_PER_MINUTE, tracked: false });

  route({
    method: 'POST', path: '/webhooks', name: 'webhooks_create', jsonLimit: '16kb',
    handler: async (ctx) => {
      const body = validate(createWebhookBody, ctx.request.body);
      ctx.status = 201;
      ctx.body = await service.create(ctx.state.auth!.accountId, body);
    },
  });

  route({
    method: 'GET', path: '/webhooks', name: 'webhooks_list',
    handler: async (ctx) => {
      ctx.body = await service.list(ctx.state.auth!.accountId);
    },
  });

  route({
    method: 'GET', path: '/webhooks/:endpointId', name: 'webhooks_get',
    handler: async (ctx) => {
      ctx.body = await service.get(ctx.state.auth!.accountId, ctx.params.endpointId);
    },
  });

  route({
    method: 'DELETE', path: '/webhooks/:endpointId', name: 'webhooks_delete',
    handler: async (ctx) => {
      ctx.body = await service.remove(ctx.state.auth!.accountId, ctx.params.endpointId);
    },
  });

  route({
    method: 'GET', path: '/webhooks/:endpointId/deliveries', name: 'webhooks_deliveries',
    handler: async (ctx) => {
      const { limit } = validate(deliveriesQuery, ctx.query);
      ctx.body = await service.deliveries(ctx.state.auth!.accountId, ctx.params.endpointId, limit);
    },
  });

  route({
    method: 'POST', path: '/webhooks/:endpointId/rotate-secret', name: 'webhooks_rotate_secret',
    handler: async (ctx) => {
      ctx.body = await service.rotateSecret(ctx.state.auth!.accountId, ctx.params.endpointId);
    },
  });
}
