import Joi from 'joi';
import { definePlugin } from '../../core/plugin.ts';
import { coreServices } from '../../core/services.ts';
import { dialogueBody, dialogueResponse, MAX_PAUSE_MS, type DialogueBody } from './schemas.ts';
import { createDialogueService } from './service.ts';

interface DialogueConfig {
  /** silence between two turns when a request names none */
  DIALOGUE_PAUSE_MS: number;
}

/** Multi-speaker dialogue into one WAV: `POST /dialogue`. */
export default definePlugin({
  id: 'dialogue',
  version: '1.0.0',
  coreApi: 2,
  description: 'Multi-speaker dialogue rendered into one WAV with per-turn offsets',
  engineFeatures: ['dialogue'],
  deps: {
    config: coreServices.config,
    logger: coreServices.logger,
    catalog: coreServices.catalog,
    billing: coreServices.billing,
    engine: coreServices.engine,
    blobs: coreServices.blobs,
    downloads: coreServices.downloads,
  },
  config: Joi.object<DialogueConfig>({ DIALOGUE_PAUSE_MS: Joi.number().integer().min(0).max(MAX_PAUSE_MS).default(350) }),
  register({ deps, config, route }) {
    const service = createDialogueService(deps, { defaultPauseMs: config.DIALOGUE_PAUSE_MS });
    route<DialogueBody, unknown>({
      method: 'POST', path: '/dialogue', auth: 'required', rateClass: 'dialogue', name: 'dialogue', tracked: true, jsonLimit: '512kb',
      summary: 'Render a multi-speaker dialogue into one WAV',
      description: 'Turns are spoken in order, each with its own voice, into one 48 kHz WAV. Billed by submitted characters up front (at least 50), refunded on failure.',
      request: { body: dialogueBody },
      responses: {
        201: { description: 'The rendered dialogue', schema: dialogueResponse },
        400: {
          description: 'Empty or over-long turn list, unreadable text, `NOTHING_TO_SPEAK`; `VOICE_NOT_FOUND` (an unknown voice, or a clone that is not yours), `VOICE_ENGINE_MISMATCH`, `VOICE_AMBIGUOUS`, '
            + '`CLONE_UNAVAILABLE` (the clone\'s reference recording was removed), `CLONE_ENGINE_RETIRED` (with `engine`), `ENGINE_RETIRED`, `UNKNOWN_ENGINE`',
          schema: Joi.object({ engine: Joi.string() }),
        },
        403: { description: 'The grant cannot pay' },
        422: { description: '`CONTENT_REJECTED` (only with aiRefine)' },
        429: { description: 'A spent cap or `CONCURRENT_CONFLICT`' },
        503: { description: 'No worker for a voice right now, the server is stopping, or the audio cannot be stored (`SERVICE_UNAVAILABLE`, Retry-After); refunded' },
      },
      handler: async (ctx, { body }) => {
        const { auth, billing, outcome, stopping } = ctx.state;
        ctx.status = 201;
        ctx.body = await service.create(body, { auth: auth!, billing, outcome, signal: stopping });
      },
    });
  },
});
