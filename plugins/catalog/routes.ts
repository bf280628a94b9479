import type { RouteRegistrar } from '../../core/plugin.ts';
import type { VoiceCatalog } from '../../core/catalog.ts';
import type { BillingService } from '../../core/billing/service.ts';
import type { Logger } from '../../core/logger.ts';
import { audioVoicesResponse, emotionTagsResponse, engineQuery, enginesResponse, voicesResponse } from './schemas.ts';
import { EMOTIONS, CUE_TAGS, STYLES_BY_ENGINE } from '../../config/emotions.ts';

export interface CatalogDeps {
  catalog: VoiceCatalog;
  billing: BillingService;
  logger: Logger;
}

/** `resolveEngine`'s refusals (core/catalog.ts), documented on every listing that takes `?engine=`. */
const engineRefusals = { 400: { description: '`ENGINE_RETIRED` (`v3`, retired on 2026-09-24) or `UNKNOWN_ENGINE` (an engine this service does not serve)' } };

export function registerCatalogRoutes(route: RouteRegistrar, deps: CatalogDeps): void {
  route({
    method: 'GET', path: '/engines', auth: 'none', name: 'engines', summary: 'Engines served and their billing multipliers',
    responses: { 200: { description: 'The engines and the live billing multipliers', schema: enginesResponse } },
    handler: async (ctx) => {
      ctx.body = { engines: deps.catalog.engines(), globalMultiplier: deps.billing.globalMultiplier };
    },
  });

  route({
    method: 'GET', path: '/emotion-tags', auth: 'none', name: 'emotion_tags', summary: 'Reading styles and inline cue tags of an engine',
    request: { query: engineQuery },
    responses: { 200: { description: 'Styles (none on v4) and cue tags of the engine', schema: emotionTagsResponse }, ...engineRefusals },
    handler: async (ctx, { query }) => {
      const key = deps.catalog.resolveEngine(query.engine);
      ctx.body = { engine: key, styles: STYLES_BY_ENGINE[key] ?? [], cueTags: CUE_TAGS, emotions: EMOTIONS };
    },
  });

  route({
    method: 'GET', path: '/voices', auth: 'optional', name: 'voices', summary: 'Voices of an engine; a key adds your cloned voices',
    request: { query: engineQuery },
    responses: { 200: { description: 'The catalogue voices of the engine, and your cloned voices when a key is sent', schema: voicesResponse }, ...engineRefusals },
    handler: async (ctx, { query }) => {
      const key = deps.catalog.resolveEngine(query.engine);
      try {
        const voices = await deps.catalog.list({ engine: key, accountId: ctx.state.auth?.accountId ?? null });
        ctx.body = { voices, count: voices.length };
      } catch (err) {
        // The catalogue itself is static; only the account's clones can fail to load.
        deps.logger.warn('cloned voices could not be read', { err: err as Error });
        const voices = await deps.catalog.list({ engine: key, accountId: null });
        ctx.body = { voices, count: voices.length, error: 'Your cloned voices could not be read right now; the catalogue is complete.' };
      }
    },
  });

  route({
    method: 'GET', path: '/audio/voices', auth: 'required', name: 'audio_voices', summary: 'Voice ids of an engine (compatible listing)',
    request: { query: engineQuery },
    responses: { 200: { description: 'Catalogue voice ids of the engine', schema: audioVoicesResponse }, ...engineRefusals },
    handler: async (ctx, { query }) => {
      const key = deps.catalog.resolveEngine(query.engine);
      const voices = await deps.catalog.list({ engine: key, accountId: null });
      ctx.body = { voices: voices.map((v) => v.id) };
    },
  });
}
