import Joi from 'joi';
import Router from '@koa/router';
import compose from 'koa-compose';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type Koa from 'koa';
import { definePlugin } from '../../core/plugin.ts';
import { coreServices } from '../../core/services.ts';
import { createAccountKeys } from '../../core/account-keys.ts';
import { consoleTokens, consoleVerifier } from './api-token.ts';
import { sessionRoutes } from './session-routes.ts';
import { accountRoutes } from './account-routes.ts';
import { applyConsoleSecurity, loadAssets, sendAsset } from './assets.ts';

interface ConsoleConfig {
  CONSOLE_ASSETS_DIR: string;
  CONSOLE_TOKEN_MINUTES: number;
}

/** dist/console beside the compiled code, or under the repository when run from source. */
function defaultAssetsDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const root = path.resolve(here, '../..');
  return path.basename(root) === 'dist' ? path.join(root, 'console') : path.join(root, 'dist', 'console');
}

const ASSETS = '/console/assets/';
const UNBUILT_PAGE = '<!doctype html><html lang="en"><meta charset="utf-8"><title>Console not built</title>'
  + '<h1>The console is not built</h1><p>Run <code>npm run build</code> (or <code>npm run build:console</code>) and restart.</p></html>';

/**
 * The web console under /console: a signed-in user's keys, balance and
 * plans, usage charts, a voice playground, webhooks, connected apps and
 * audiobooks. The front end (plugins/console/web, built by Vite) talks only
 * to the public `/api/v1` routes, with a short-lived token of the user's
 * session (a registered credential verifier), and to the session routes
 * here; so it shows nothing of the account a key could not see, except the
 * keys and grants SPEC gives the signed-in user.
 */
export default definePlugin({
  id: 'console',
  version: '1.0.0',
  coreApi: 2,
  description: 'Web console: sign in, keys, balance, usage charts, playground, webhooks, connected apps, audiobooks',
  deps: {
    config: coreServices.config, logger: coreServices.logger, identity: coreServices.identity, documents: coreServices.documents,
    keys: coreServices.keys, catalog: coreServices.catalog, selfApi: coreServices.selfApi,
  },
  config: Joi.object<ConsoleConfig>({
    CONSOLE_ASSETS_DIR: Joi.string().default(defaultAssetsDir()),
    CONSOLE_TOKEN_MINUTES: Joi.number().integer().min(1).max(60).default(15),
  }),
  register({ deps, config, mount, authenticator }) {
    const tokens = consoleTokens(deps.config.identity.sessionSecret, config.CONSOLE_TOKEN_MINUTES);
    authenticator(consoleVerifier({ tokens, identity: deps.identity, documents: deps.documents, defaultEngine: deps.catalog.defaultEngine() }));

    const assets = loadAssets(config.CONSOLE_ASSETS_DIR);
    if (!assets.index) deps.logger.warn('the console front end is not built: /console answers 503 until `npm run build` is run', { dir: assets.dir });

    const router = new Router();
    sessionRoutes(router, { identity: deps.identity, tokens });
    accountRoutes(router, {
      identity: deps.identity, documents: deps.documents, keys: deps.keys,
      accountKeys: createAccountKeys({ documents: deps.documents }), timezoneOffsetMinutes: deps.config.billing.timezoneOffsetMinutes,
    });

    // Download links (chapters, jobs) may live on PUBLIC_BASE_URL's origin rather than the page's.
    const mediaOrigins = () => {
      try {
        return [new URL(deps.selfApi.publicBaseUrl()).origin];
      } catch {
        return [];
      }
    };
    const files: Koa.Middleware = async (ctx, next) => {
      if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || ctx.path.startsWith('/console/api/')) return next();
      if (ctx.path.startsWith(ASSETS)) {
        const file = assets.files.get(ctx.path.slice(ASSETS.length));
        // Names carry a content hash: an address serves one content for ever.
        if (file) sendAsset(ctx, file, 'public, max-age=31536000, immutable');
        return;
      }
      applyConsoleSecurity(ctx, mediaOrigins());
      if (!assets.index) {
        ctx.status = 503;
        ctx.set('Cache-Control', 'no-store');
        ctx.type = 'html';
        ctx.body = UNBUILT_PAGE;
        return;
      }
      // Every console address is the one page; the front end routes by path.
      sendAsset(ctx, assets.index, 'no-cache');
    };
    mount({ prefix: '/console', middleware: compose<any>([router.routes(), router.allowedMethods(), files]) });
  },
});
