import { definePlugin } from '../../core/plugin.ts';
import { coreServices } from '../../core/services.ts';
import { balanceResponse } from './schemas.ts';

/** `GET /balance`: what the key's account can spend now (SPEC: Balance). */
export default definePlugin({
  id: 'account',
  version: '2.0.0',
  coreApi: 2,
  description: 'Token balance of the key and its account',
  deps: { billing: coreServices.billing, config: coreServices.config },
  register({ deps, route }) {
    route({
      method: 'GET', path: '/balance', auth: 'required', name: 'balance',
      perMinute: deps.config.limits.accountRoutesPerMinute,
      summary: 'What the key can spend now',
      responses: { 200: { description: 'Tokens the key can spend, and the plan they are measured on', schema: balanceResponse } },
      handler: async (ctx) => {
        const auth = ctx.state.auth!;
        ctx.body = await deps.billing.balance({ accountId: auth.accountId, keyId: auth.keyId, grantId: auth.grantId });
      },
    });
  },
});
