import { definePlugin } from '../../core/plugin.ts';
import { coreServices } from '../../core/services.ts';
import { registerSpeechRoutes } from './routes.ts';
import { createSpeechService } from './service.ts';
import { startStaleCopySweeper } from './sweeper.ts';
import { SERVICE_POOL } from './slots.ts';

/**
 * Synchronous and streaming speech: `POST /audio/speech` (the compatible
 * route), `POST /tts/stream` (length-prefixed frames) and `POST /agent/speech`
 * (the voice-agent webhook, raw PCM). A non-streamed `/audio/speech` saves a
 * copy whose id (`X-Service-Job-Id`) is read through `GET /tts/{id}`: that
 * route belongs to the jobs plugin, so this one depends on it.
 */
export default definePlugin({
  id: 'speech',
  version: '2.0.0',
  coreApi: 2,
  description: 'Synchronous, framed-stream and voice-agent speech routes',
  dependsOn: ['jobs'],
  engineFeatures: ['generate', 'stream', 'clone'],
  deps: {
    config: coreServices.config,
    logger: coreServices.logger,
    catalog: coreServices.catalog,
    billing: coreServices.billing,
    engine: coreServices.engine,
    jobs: coreServices.jobs,
    blobs: coreServices.blobs,
    counters: coreServices.counters,
    metrics: coreServices.metrics,
  },
  register({ deps, route, worker }) {
    // The service-wide pool lives in the counters store (Redis in a fleet): every API process reports the same figure.
    deps.metrics.streamSlotsCapacity.set(deps.config.limits.streamCapacity);
    deps.metrics.registerCollector(async () => deps.metrics.streamSlotsInUse.set(await deps.counters.slots.inUse(SERVICE_POOL)));
    registerSpeechRoutes(route, createSpeechService(deps));
    // Saved copies are this plugin's rows: it fails the ones a crashed process left streaming.
    worker({ name: 'stale-copy-sweeper', role: 'api', start: async () => startStaleCopySweeper(deps) });
  },
});
