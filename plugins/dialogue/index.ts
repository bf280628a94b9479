import Joi from 'joi';
import { definePlugin } from '../../core/plugin.ts';
import { coreServices } from '../../core/services.ts';
import { dialogueBody, MAX_PAUSE_MS, type DialogueBody } from './schemas.ts';
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
      request: { body: dialogueBody },
      handler: async (ctx, { body }) => {
        const { auth, billing, outcome, stopping } = ctx.state;
        ctx.status = 201;
        ctx.body = await service.create(body, { auth: auth!, billing, outcome, signal: stopping });
      },
    });
  },
});
