import { definePlugin } from '../../core/plugin.ts';
import { systemResolver } from '../../core/net/destination.ts';
import { startWebhookDispatcher } from '../../pipelines/webhook-dispatcher/index.ts';
import { registerWebhookRoutes } from './routes.ts';
import { createWebhookService } from './service.ts';

/**
 * Webhooks: endpoint management under /webhooks (api role) and the
 * dispatcher that signs and delivers `tts.job.*` events (pipelines role).
 */
export default definePlugin({
  name: 'webhooks',
  version: '1.0.0',
  description: 'Webhook endpoints and signed, retried, SSRF-guarded delivery of job events',
  setup(plugin) {
    const store = plugin.documents.webhooks;
    const service = createWebhookService({
      store,
      keys: plugin.documents.keys,
      policy: { allowLoopback: plugin.config.webhooks.allowLoopback, resolve: systemResolver },
    });
    registerWebhookRoutes(plugin, service);
    plugin.worker({
      name: 'dispatcher',
      role: 'pipelines',
      start: async () => {
        const dispatcher = await startWebhookDispatcher({
          store,
          bus: plugin.bus,
          blobs: plugin.blobs,
          downloads: plugin.downloads,
          logger: plugin.logger,
          metrics: plugin.metrics,
          config: plugin.config.webhooks,
        });
        return () => dispatcher.stop();
      },
    });
  },
});
