import { definePlugin } from '../../core/plugin.ts';
import { coreServices } from '../../core/services.ts';
import { systemResolver } from '../../core/net/destination.ts';
import { registerWebhookRoutes } from './routes.ts';
import { createWebhookService } from './service.ts';

/**
 * Webhook endpoint management under /webhooks (api role). Deliveries are the
 * webhook dispatcher module's work (pipelines/webhook-dispatcher); both use
 * the shared webhooks store.
 */
export default definePlugin({
  id: 'webhooks',
  version: '2.0.0',
  coreApi: 2,
  description: 'Webhook endpoints: register, list, delete, pause, test, rotate the secret, read deliveries',
  deps: { store: coreServices.webhooks, documents: coreServices.documents, config: coreServices.config },
  register({ deps, route }) {
    const service = createWebhookService({
      store: deps.store,
      keys: deps.documents.keys,
      policy: { allowLoopback: deps.config.webhooks.allowLoopback, resolve: systemResolver },
    });
    registerWebhookRoutes(route, service);
  },
});
