import Joi from 'joi';
import compose from 'koa-compose';
import { definePlugin } from '../../core/plugin.ts';
import { coreServices } from '../../core/services.ts';
import { adminRouter } from './routes.ts';

/**
 * The admin HTTP API under /admin/v1 (accounts, grants, keys, users, clones,
 * reconciliation), guarded by ADMIN_TOKEN; without one it answers 403. The
 * same operations run from the command line: `npm run admin -- <command>`.
 */
export default definePlugin({
  id: 'admin',
  version: '2.0.0',
  coreApi: 2,
  description: 'Admin API: accounts, grants, keys, clones, reconciliation',
  config: Joi.object<{ ADMIN_TOKEN?: string }>({ ADMIN_TOKEN: Joi.string().min(16) }),
  deps: { documents: coreServices.documents, billing: coreServices.billing, keys: coreServices.keys, identity: coreServices.identity },
  register({ deps, config, mount }) {
    const router = adminRouter({ ...deps, token: config.ADMIN_TOKEN ?? null });
    mount({ prefix: '/admin/v1', middleware: compose<any>([router.routes(), router.allowedMethods()]) });
  },
});
