import { definePlugin } from '../../core/plugin.ts';
import { coreServices } from '../../core/services.ts';
import { DomainError } from '../../core/errors.ts';
import { closedRefusalFields } from './schemas.ts';

/** Cloning moved to the web studio on 2026-09-23: these routes answer 410 before any billing or GPU work. */
const CLOSED_ROUTES = [
  { method: 'POST', path: '/voices', name: 'voices_create' },
  { method: 'DELETE', path: '/voices/:voiceId', name: 'voices_delete' },
  { method: 'POST', path: '/clone', name: 'clone' },
  { method: 'POST', path: '/upload', name: 'upload' },
  { method: 'POST', path: '/prepare', name: 'prepare' },
] as const;

export default definePlugin({
  id: 'closed',
  version: '2.0.0',
  coreApi: 2,
  description: 'Closed cloning routes (410 CLONE_WEB_ONLY)',
  deps: { config: coreServices.config },
  register({ deps, route }) {
    for (const closed of CLOSED_ROUTES) {
      route({
        method: closed.method, path: closed.path, auth: 'optional', name: closed.name, tracked: true, body: 'none',
        summary: 'Closed: cloning is done in the web studio',
        description: 'Answers 410 `CLONE_WEB_ONLY` before any billing or GPU work. Cloned voices made in the studio work as `voiceId` on POST /tts and POST /tts/stream.',
        responses: { 410: { description: '`CLONE_WEB_ONLY`: cloning is done in the web studio (`cloneUrl`)', schema: closedRefusalFields } },
        handler: async () => {
          throw new DomainError('gone', 'Voice cloning is no longer available through the API. Create cloned voices in the web studio; they then work as voiceId on POST /tts and POST /tts/stream.', {
            code: 'CLONE_WEB_ONLY',
            extra: { cloneUrl: deps.config.cloneUrl },
          });
        },
      });
    }
  },
});
