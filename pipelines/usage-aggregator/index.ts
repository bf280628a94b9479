import { definePlugin } from '../../core/plugin.ts';
import { coreServices } from '../../core/services.ts';
import { startUsageAggregator } from './aggregator.ts';

/** Writes request outcomes and job closings into the analytics store that `GET /usage` reads (pipelines role). */
export default definePlugin({
  id: 'usage-aggregator',
  version: '2.0.0',
  coreApi: 2,
  description: 'Usage aggregator: request.outcomes and tts.job.events into analytics, idempotent on event ids',
  deps: { bus: coreServices.bus, analytics: coreServices.analytics, logger: coreServices.logger, metrics: coreServices.metrics },
  register({ deps, worker }) {
    worker({
      name: 'aggregator',
      role: 'pipelines',
      start: async () => {
        const subscription = await startUsageAggregator(deps);
        return () => subscription.stop();
      },
    });
  },
});
