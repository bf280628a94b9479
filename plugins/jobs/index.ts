import { definePlugin } from '../../core/plugin.ts';
import { createJobsService } from './service.ts';
import { registerJobRoutes } from './routes.ts';
import { startStaleCopySweeper } from './sweeper.ts';

/** Asynchronous jobs: `POST /tts`, `GET /tts/{jobId}`, `GET /tts?ids=`. Rendering is the inference role's worker. */
export default definePlugin({
  name: 'jobs',
  version: '1.0.0',
  description: 'Asynchronous TTS jobs with idempotency, content cache and queue limits',
  setup(plugin) {
    registerJobRoutes(plugin, createJobsService(plugin));
    plugin.worker({ name: 'stale-copy-sweeper', role: 'api', start: async () => startStaleCopySweeper(plugin) });
  },
});
