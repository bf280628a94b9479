import { definePlugin } from '../../core/plugin.ts';
import { coreServices } from '../../core/services.ts';
import { TOPICS } from '../../core/ports/bus.ts';
import { createJobsService } from './service.ts';
import { registerJobRoutes } from './routes.ts';

/** Asynchronous jobs: `POST /tts`, `GET /tts/{jobId}`, `GET /tts?ids=`. Rendering is the inference module's worker. */
export default definePlugin({
  id: 'jobs',
  version: '2.0.0',
  coreApi: 2,
  description: 'Asynchronous TTS jobs with idempotency, content cache and queue limits',
  engineFeatures: ['generate', 'clone'],
  deps: {
    jobs: coreServices.jobs,
    catalog: coreServices.catalog,
    billing: coreServices.billing,
    blobs: coreServices.blobs,
    downloads: coreServices.downloads,
    publisher: coreServices.publisher([TOPICS.jobs]),
    counters: coreServices.counters,
    config: coreServices.config,
    logger: coreServices.logger,
    metrics: coreServices.metrics,
  },
  register({ deps, route }) {
    deps.metrics.registerCollector(async () => deps.metrics.queueDepth.set(await deps.jobs.countActive()));
    registerJobRoutes(route, deps.counters.idempotency, createJobsService(deps));
  },
});
