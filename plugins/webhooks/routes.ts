import type { RouteDefinition, RouteRegistrar } from '../../core/plugin.ts';
import {
  createdEndpointResponse, createWebhookBody, deletedEndpointResponse, deliveriesQuery, deliveriesResponse, deliveryResponse, endpointListResponse,
  endpointResponse, notificationsQuery, notificationsResponse, rotatedEndpointResponse, type CreateWebhookBody,
} from './schemas.ts';
import type { WebhookService } from './service.ts';

/** SPEC allows 10 to 30 per minute for webhook management; counted per key and per operation. */
export const WEBHOOK_ROUTES_PER_MINUTE = 20;

export function registerWebhookRoutes(register: RouteRegistrar, service: WebhookService): void {
  const notFound = { 404: { description: '`WEBHOOK_NOT_FOUND`: no such endpoint, or another account\'s' } };
  const route = <B, Q>(def: Omit<RouteDefinition<B, Q>, 'auth' | 'perMinute' | 'tracked'>) =>
    register<B, Q>({ ...def, auth: 'required', perMinute: WEBHOOK_ROUTES_PER_MINUTE, tracked: false });

  route<CreateWebhookBody, unknown>({
    method: 'POST', path: '/webhooks', name: 'webhooks_create', jsonLimit: '16kb', summary: 'Register a webhook endpoint',
    request: { body: createWebhookBody },
    responses: {
      201: { description: 'The endpoint, with its signing secret shown this once', schema: createdEndpointResponse },
      400: {
        description: 'A URL that is not https (`WEBHOOK_URL_NOT_HTTPS`), carries credentials (`WEBHOOK_URL_CREDENTIALS`), resolves to a private address (`WEBHOOK_URL_BLOCKED`), does not resolve (`WEBHOOK_URL_UNRESOLVABLE`) '
          + 'or does not parse (`WEBHOOK_URL_INVALID`), or an `apiKeyId` that is not an active key of the account (`WEBHOOK_API_KEY_UNKNOWN`)',
      },
    },
    handler: async (ctx, { body }) => {
      ctx.status = 201;
      ctx.body = await service.create(ctx.state.auth!.accountId, body);
    },
  });

  route({
    method: 'GET', path: '/webhooks', name: 'webhooks_list', summary: 'List webhook endpoints',
    responses: { 200: { description: 'The account\'s endpoints', schema: endpointListResponse } },
    handler: async (ctx) => {
      ctx.body = await service.list(ctx.state.auth!.accountId);
    },
  });

  route<unknown, { limit: number }>({
    method: 'GET', path: '/webhooks/notifications', name: 'webhooks_notifications', summary: 'Notifications of dead deliveries',
    description: 'One notification per delivery that ended `DEAD` (every attempt failed, or its endpoint was deleted or disabled), newest first, for the whole account.',
    request: { query: notificationsQuery },
    responses: { 200: { description: 'The account\'s notifications (at most `limit`)', schema: notificationsResponse } },
    handler: async (ctx, { query }) => {
      ctx.body = await service.notifications(ctx.state.auth!.accountId, query.limit);
    },
  });

  route({
    method: 'GET', path: '/webhooks/:endpointId', name: 'webhooks_get', summary: 'One webhook endpoint',
    responses: { 200: { description: 'The endpoint', schema: endpointResponse }, ...notFound },
    handler: async (ctx) => {
      ctx.body = await service.get(ctx.state.auth!.accountId, ctx.params.endpointId);
    },
  });

  route({
    method: 'DELETE', path: '/webhooks/:endpointId', name: 'webhooks_delete', summary: 'Delete a webhook endpoint',
    description: 'Deliveries still pending fail `endpoint_unavailable`.',
    responses: { 200: { description: 'Deleted', schema: deletedEndpointResponse }, ...notFound },
    handler: async (ctx) => {
      ctx.body = await service.remove(ctx.state.auth!.accountId, ctx.params.endpointId);
    },
  });

  route<unknown, { limit: number }>({
    method: 'GET', path: '/webhooks/:endpointId/deliveries', name: 'webhooks_deliveries', summary: 'Recent delivery attempts of an endpoint',
    request: { query: deliveriesQuery },
    responses: { 200: { description: 'Recent delivery records (at most `limit`)', schema: deliveriesResponse }, ...notFound },
    handler: async (ctx, { query }) => {
      ctx.body = await service.deliveries(ctx.state.auth!.accountId, ctx.params.endpointId, query.limit);
    },
  });

  route({
    method: 'POST', path: '/webhooks/:endpointId/rotate-secret', name: 'webhooks_rotate_secret', summary: 'Rotate the signing secret',
    description: 'The new secret is shown once; the previous one keeps verifying for 24 hours (deliveries carry one `v1=` signature per live secret).',
    responses: { 200: { description: 'The endpoint with its new secret', schema: rotatedEndpointResponse }, ...notFound },
    handler: async (ctx) => {
      ctx.body = await service.rotateSecret(ctx.state.auth!.accountId, ctx.params.endpointId);
    },
  });

  // Additions to SPEC's table (README "Webhooks"): pause and resume, and a test event.
  route({
    method: 'POST', path: '/webhooks/:endpointId/disable', name: 'webhooks_disable', summary: 'Pause an endpoint (status DISABLED)',
    description: 'No new deliveries are recorded for it; an attempt due while it is paused fails `endpoint_unavailable`. Pausing a paused endpoint changes nothing.',
    responses: { 200: { description: 'The endpoint, `DISABLED`', schema: endpointResponse }, ...notFound },
    handler: async (ctx) => {
      ctx.body = await service.setStatus(ctx.state.auth!.accountId, ctx.params.endpointId, 'DISABLED');
    },
  });

  route({
    method: 'POST', path: '/webhooks/:endpointId/enable', name: 'webhooks_enable', summary: 'Resume a paused endpoint (status ENABLED)',
    responses: { 200: { description: 'The endpoint, `ENABLED`', schema: endpointResponse }, ...notFound },
    handler: async (ctx) => {
      ctx.body = await service.setStatus(ctx.state.auth!.accountId, ctx.params.endpointId, 'ENABLED');
    },
  });

  route({
    method: 'POST', path: '/webhooks/:endpointId/test', name: 'webhooks_test', summary: 'Send a signed webhook.test event to the endpoint',
    description: 'Signed like a job event and attempted once (never retried); its delivery record appears in `/deliveries`.',
    responses: {
      202: { description: 'Queued: the test event\'s delivery record, `PENDING` until its one attempt', schema: deliveryResponse },
      ...notFound,
      409: { description: '`WEBHOOK_DISABLED`: the endpoint is paused; enable it first' },
    },
    handler: async (ctx) => {
      ctx.status = 202;
      ctx.body = await service.sendTest(ctx.state.auth!.accountId, ctx.params.endpointId);
    },
  });
}
