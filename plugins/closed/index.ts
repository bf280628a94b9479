import { definePlugin } from '../../core/plugin.ts';
import { ApiError } from '../../core/errors.ts';

/** Cloning moved to the web studio on 2026-09-23: these routes answer 410 before any billing or GPU work. */
const CLOSED_ROUTES = [
  { method: 'POST', path: '/voices', name: 'voices_create' },
  { method: 'DELETE', path: '/voices/:voiceId', name: 'voices_delete' },
  { method: 'POST', path: '/clone', name: 'clone' },
  { method: 'POST', path: '/upload', name: 'upload' },
  { method: 'POST', path: '/prepare', name: 'prepare' },
] as const;

export default definePlugin({
  name: 'closed',
  version: '1.0.0',
  description: 'Closed cloning routes (410 CLONE_WEB_ONLY)',
  setup(plugin) {
    for (const route of CLOSED_ROUTES) {
      plugin.route({
        method: route.method, path: route.path, auth: 'optional', name: route.name, tracked: true, body: 'none',
        handler: async () => {
          throw new ApiError(410, 'Voice cloning is no longer available through the API. Create cloned voices in the web studio; they then work as voiceId on POST /tts and POST /tts/stream.', {
            code: 'CLONE_WEB_ONLY',
            extra: { cloneUrl: plugin.config.cloneUrl },
          });
        },
      });
    }
  },
});
