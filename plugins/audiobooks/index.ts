import { definePlugin } from '../../core/plugin.ts';
import { coreServices } from '../../core/services.ts';
import { TOPICS } from '../../core/ports/bus.ts';
import { audiobookConfigSchema, settingsOf } from './config.ts';
import { openAudiobookStore } from './store/open.ts';
import { apiWorkProbe } from './api-work.ts';
import { createAudiobookService } from './service.ts';
import { registerAudiobookRoutes } from './routes.ts';
import { runScheduler } from './scheduler/scheduler.ts';
import { runMasteringWorker } from './mastering/worker.ts';
import { startChapterRenderer } from './render/worker.ts';

/**
 * Audiobooks: books of chapters read by a narrator and up to 30 cast voices.
 * The api role serves `/audiobooks` and `/library`; the pipelines role runs
 * the scheduler (fair turns, a chapter at a time, only while no API work
 * waits) and mastering; the inference role renders chapters part by part as
 * a consumer group on `audiobook.chapters`. Its store is its own
 * (coreServices.database: SQLite or MongoDB).
 */
export default definePlugin({
  id: 'audiobooks',
  version: '1.0.0',
  coreApi: 2,
  description: 'Audiobooks: chapters, a fair chapter scheduler on the bus, mastering and delivery',
  config: audiobookConfigSchema,
  deps: {
    logger: coreServices.logger,
    database: coreServices.database,
    catalog: coreServices.catalog,
    billing: coreServices.billing,
    documents: coreServices.documents,
    downloads: coreServices.downloads,
    blobs: coreServices.blobs,
    jobs: coreServices.jobs,
    counters: coreServices.counters,
    bus: coreServices.bus,
    publisher: coreServices.publisher([TOPICS.chapters]),
    engine: coreServices.engine,
    lifecycle: coreServices.lifecycle,
  },
  async register({ deps, config, route, worker }) {
    const settings = settingsOf(config);
    const store = await openAudiobookStore(deps.database);
    const apiWork = apiWorkProbe(deps.jobs, deps.counters.slots);
    const { logger, billing } = deps;

    registerAudiobookRoutes(route, createAudiobookService({
      store, catalog: deps.catalog, billing, documents: deps.documents, downloads: deps.downloads, settings,
    }));
    worker({
      name: 'scheduler',
      role: 'pipelines',
      start: async () => runScheduler({ store, billing, documents: deps.documents, publisher: deps.publisher, logger, apiWork, settings }),
    });
    worker({
      name: 'mastering',
      role: 'pipelines',
      start: async () => runMasteringWorker({ store, blobs: deps.blobs, logger, retryMs: settings.masterRetryMs }, settings.tickMs),
    });
    worker({
      name: 'renderer',
      role: 'inference',
      start: () => startChapterRenderer({
        store, bus: deps.bus, blobs: deps.blobs, engine: deps.engine, catalog: deps.catalog, billing, logger,
        lifecycle: deps.lifecycle, apiWork, settings,
      }),
    });
  },
});
