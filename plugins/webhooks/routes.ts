import type { RouteDefinition, RouteRegistrar } from '../../core/plugin.ts';
import { createWebhookBody, deliveriesQuery, type CreateWebhookBody } from './schemas.ts';
import type { WebhookService } from './service.ts';

/** SPEC allows 10 to 30 per minute for webhook management; counted per key and per operation. */
export const WEBHOOK_ROUTES_PER_MINUTE = 20;

export function registerWebhookRoutes(register: RouteRegistrar, service: WebhookService): void {
  const route = <B, Q>(def: Omit<RouteDefinition<B, Q>, 'auth' | 'perMinute' | 'tracked'>) =>
    register<B, Q>({ ...def, auth: 'required', perMinute: WEBHOOK_ROUTES_PER_MINUTE, tracked: false });

  route<CreateWebhookBody, unknown>({
    method: 'POST', path: '/webhooks', name: 'webhooks_create', jsonLimit: '16kb', summary: 'Register a webhook endpoint',
    request: { body: createWebhookBody },
    handler: async (ctx, { body }) => {
      ctx.status = 201;
      ctx.body = await service.create(ctx.state.auth!.accountId, body);
    },
  });

  route({
    method: 'GET', path: '/webhooks', name: 'webhooks_list', summary: 'List webhook endpoints',
    handler: async (ctx) => {
      ctx.body = await service.list(ctx.state.auth!.accountId);
    },
  });

  route({
    method: 'GET', path: '/webhooks/:endpointId', name: 'webhooks_get', summary: 'One webhook endpoint',
    handler: async (ctx) => {
      ctx.body = await service.get(ctx.state.auth!.accountId, ctx.params.endpointId);
    },
  });

  route({
    method: 'DELETE', path: '/webhooks/:endpointId', name: 'webhooks_delete', summary: 'Delete a webhook endpoint',
    handler: async (ctx) => {
      ctx.body = await service.remove(ctx.state.auth!.accountId, ctx.params.endpointId);
    },
  });

  route<unknown, { limit: number }>({
    method: 'GET', path: '/webhooks/:endpointId/deliveries', name: 'webhooks_deliveries', summary: 'Recent delivery attempts of an endpoint',
    request: { query: deliveriesQuery },
    handler: async (ctx, { query }) => {
      ctx.body = await service.deliveries(ctx.state.auth!.accountId, ctx.params.endpointId, query.limit);
    },
  });

  route({
    method: 'POST', path: '/webhooks/:endpointId/rotate-secret', name: 'webhooks_rotate_secret', summary: 'Rotate the signing secret',
    handler: async (ctx) => {
      ctx.body = await service.rotateSecret(ctx.state.auth!.accountId, ctx.params.endpointId);
    },
  });

  // Additions to SPEC's table (README "Webhooks"): pause and resume, and a test event.
  route({
    method: 'POST', path: '/webhooks/:endpointId/disable', name: 'webhooks_disable', summary: 'Pause an endpoint (status DISABLED)',
    handler: async (ctx) => {
      ctx.body = await service.setStatus(ctx.state.auth!.accountId, ctx.params.endpointId, 'DISABLED');
    },
  });

  route({
    method: 'POST', path: '/webhooks/:endpointId/enable', name: 'webhooks_enable', summary: 'Resume a paused endpoint (status ENABLED)',
    handler: async (ctx) => {
      ctx.body = await service.setStatus(ctx.state.auth!.accountId, ctx.params.endpointId, 'ENABLED');
    },
  });

  route({
    method: 'POST', path: '/webhooks/:endpointId/test', name: 'webhooks_test', summary: 'Send a signed webhook.test event to the endpoint',
    handler: async (ctx) => {
      ctx.status = 202;
      ctx.body = await service.sendTest(ctx.state.auth!.accountId, ctx.params.endpointId);
    },
  });
}
