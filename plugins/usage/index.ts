import { definePlugin } from '../../core/plugin.ts';
import { coreServices } from '../../core/services.ts';
import { usageQuery, usageResponse, type UsageQuery } from './schemas.ts';
import { usageReport } from './service.ts';

/** `GET /usage`: totals and breakdowns from the analytics port (ClickHouse in production). */
export default definePlugin({
  id: 'usage',
  version: '2.0.0',
  coreApi: 2,
  description: 'Usage reports per key or account',
  deps: { analytics: coreServices.analytics, config: coreServices.config },
  register({ deps, route }) {
    route<unknown, UsageQuery>({
      method: 'GET', path: '/usage', auth: 'required', name: 'usage', perMinute: deps.config.limits.accountRoutesPerMinute,
      summary: 'Usage of the key or its account over a window',
      request: { query: usageQuery },
      responses: { 200: { description: 'Totals and breakdowns over the window', schema: usageResponse } },
      handler: async (ctx, { query }) => {
        ctx.body = await usageReport(deps.analytics, ctx.state.auth!, query);
      },
    });
  },
});
