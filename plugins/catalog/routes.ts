import type { PluginContext, RouteContext } from '../../core/plugin.ts';
import { validate } from '../../core/http/validate.ts';
import { engineQuery } from './schemas.ts';
import { EMOTIONS, CUE_TAGS, STYLES_BY_ENGINE } from '../../config/emotions.ts';

export function registerCatalogRoutes(plugin: PluginContext): void {
  plugin.route({
    method: 'GET', path: '/engines', auth: 'none', name: 'engines',
    handler: async (ctx: RouteContext) => {
      ctx.body = { engines: plugin.catalog.engines(), globalMultiplier: plugin.billing.globalMultiplier };
    },
  });

  plugin.route({
    method: 'GET', path: '/emotion-tags', auth: 'none', name: 'emotion_tags',
    handler: async (ctx) => {
      const { engine } = validate(engineQuery, ctx.query);
      const key = plugin.catalog.resolveEngine(engine);
      ctx.body = { engine: key, styles: STYLES_BY_ENGINE[key] ?? [], cueTags: CUE_TAGS, emotions: EMOTIONS };
    },
  });

  plugin.route({
    method: 'GET', path: '/voices', auth: 'optional', name: 'voices',
    handler: async (ctx) => {
      const { engine } = validate(engineQuery, ctx.query);
      const key = plugin.catalog.resolveEngine(engine);
      try {
        const voices = await plugin.catalog.list({ engine: key, accountId: ctx.state.auth?.accountId ?? null });
        ctx.body = { voices, count: voices.length };
      } catch (err) {
        // The catalogue itself is static; only the account's clones can fail to load.
        plugin.logger.warn('cloned voices could not be read', { err: err as Error });
        const voices = await plugin.catalog.list({ engine: key, accountId: null });
        ctx.body = { voices, count: voices.length, error: 'Your cloned voices could not be read right now; the catalogue is complete.' };
      }
    },
  });

  plugin.route({
    method: 'GET', path: '/audio/voices', auth: 'required', name: 'audio_voices',
    handler: async (ctx) => {
      const { engine } = validate(engineQuery, ctx.query);
      const key = plugin.catalog.resolveEngine(engine);
      const voices = await plugin.catalog.list({ engine: key, accountId: null });
      ctx.body = { voices: voices.map((v) => v.id) };
    },
  });
}
