import Joi from 'joi';
import { definePlugin } from '../../core/plugin.ts';
import { validate } from '../../core/http/validate.ts';

const body = Joi.object({ text: Joi.string().max(500).required() });

export default definePlugin({
  name: 'echo',
  version: '1.0.0',
  description: 'Prices a text without speaking it',
  setup(plugin) {
    plugin.route({
      method: 'POST',
      path: '/echo/price',
      auth: 'required',        // 401 without a key; ctx.state.auth with one
      rateClass: 'speech',     // 300 requests per minute per key
      name: 'echo_price',      // logical route name in metrics and usage
      handler: async (ctx) => {
        const { text } = validate(body, ctx.request.body); // 400 with one message per field
        const engine = plugin.catalog.defaultEngine();
        ctx.body = { engine, ...plugin.billing.price({ text, engine, aiRefine: false }) };
      },
    });
  },
});
