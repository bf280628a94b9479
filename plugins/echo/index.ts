import Joi from 'joi';
import { definePlugin } from '../../core/plugin.ts';
import { coreServices } from '../../core/services.ts';

export default definePlugin({
  id: 'echo',
  version: '1.0.0',
  coreApi: 2,
  description: 'Prices a text without speaking it',
  // The services it uses, and nothing else: it receives exactly these.
  deps: { billing: coreServices.billing, catalog: coreServices.catalog },
  // Its own setting, validated at start-up with the rest (ECHO_MAX_CHARS=2000).
  config: Joi.object<{ ECHO_MAX_CHARS: number }>({ ECHO_MAX_CHARS: Joi.number().integer().min(1).default(500) }),
  register({ deps, config, route }) {
    route({
      method: 'POST',
      path: '/echo/price',
      auth: 'required',        // 401 without a key; ctx.state.auth with one
      rateClass: 'speech',     // 300 requests per minute per key
      name: 'echo_price',      // logical route name in metrics and usage
      request: { body: Joi.object<{ text: string }>({ text: Joi.string().max(config.ECHO_MAX_CHARS).required() }) },
      // For the API reference (/api/v1/openapi.json); the tests check every answer against it.
      responses: { 200: { description: 'The price', schema: Joi.object({ engine: Joi.string(), characters: Joi.number(), tokens: Joi.number() }) } },
      handler: async (ctx, { body }) => { // body validated by core: 400 with one message per field
        const engine = deps.catalog.defaultEngine();
        ctx.body = { engine, ...deps.billing.price({ text: body.text, engine, aiRefine: false }) };
      },
    });
  },
});
