import { definePlugin } from '../../core/plugin.ts';
import { coreServices } from '../../core/services.ts';
import { startWebhookDispatcher } from './dispatcher.ts';

/** Signs and delivers `tts.job.*` events to webhook endpoints (pipelines role). */
export default definePlugin({
  id: 'webhook-dispatcher',
  version: '2.0.0',
  coreApi: 2,
  description: 'Signed, retried, SSRF-guarded webhook delivery of job events',
  deps: {
    store: coreServices.webhooks,
    bus: coreServices.bus,
    blobs: coreServices.blobs,
    downloads: coreServices.downloads,
    logger: coreServices.logger,
    metrics: coreServices.metrics,
    config: coreServices.config,
  },
  register({ deps, worker }) {
    worker({
      name: 'dispatcher',
      role: 'pipelines',
      start: async () => {
        const dispatcher = await startWebhookDispatcher({ ...deps, config: deps.config.webhooks });
        return () => dispatcher.stop();
      },
    });
  },
});
