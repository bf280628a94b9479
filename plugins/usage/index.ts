import { definePlugin } from '../../core/plugin.ts';
import { validate } from '../../core/http/validate.ts';
import { usageQuery } from './schemas.ts';
import { usageReport } from './service.ts';

/** `GET /usage`: totals and breakdowns from the analytics port (ClickHouse in production). */
export default definePlugin({
  name: 'usage',
  version: '1.0.0',
  description: 'Usage reports per key or account',
  setup(plugin) {
    plugin.route({
      method: 'GET', path: '/usage', auth: 'required', name: 'usage', perMinute: plugin.config.limits.accountRoutesPerMinute,
      handler: async (ctx) => {
        const query = validate(usageQuery, ctx.query) as { from?: Date; to?: Date; scope: 'key' | 'account' };
        ctx.body = await usageReport(plugin.analytics, ctx.state.auth!, query);
      },
    });
  },
});
