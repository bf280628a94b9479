import { definePlugin } from '../../core/plugin.ts';

/** `GET /balance`: what the key's account can spend now (SPEC: Balance). */
export default definePlugin({
  name: 'account',
  version: '1.0.0',
  description: 'Token balance of the key and its account',
  setup(plugin) {
    plugin.route({
      method: 'GET', path: '/balance', auth: 'required', name: 'balance',
      perMinute: plugin.config.limits.accountRoutesPerMinute,
      handler: async (ctx) => {
        const auth = ctx.state.auth!;
        ctx.body = await plugin.billing.balance({ accountId: auth.accountId, keyId: auth.keyId, grantId: auth.grantId });
      },
    });
  },
});
