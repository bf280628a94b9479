import Koa from 'koa';
import Router from '@koa/router';
import compose from 'koa-compose';
import { randomUUID } from 'node:crypto';
import type { CoreServices, RouteDefinition } from '../plugin.ts';
import { routePipeline } from './route-pipeline.ts';
import { sendError, toApiError } from './envelopes.ts';
import { ApiError } from '../errors.ts';
import { coreRoutes } from './core-routes.ts';

export const API_PREFIX = '/api/v1';

/**
 * The Koa application: request ids and the global error boundary for
 * everything outside plugin routes, core routes (/healthz, /readyz,
 * /metrics, /files, /admin/v1), then every plugin route under /api/v1.
 */
export function buildKoaApp(services: CoreServices, routes: RouteDefinition[], extraRouters: Router[] = []): Koa {
  const app = new Koa({ proxy: true });
  app.silent = true;

  app.use(async (ctx, next) => {
    const requestId = randomUUID();
    ctx.state.requestId = requestId;
    ctx.state.startedAt = performance.now();
    ctx.set('X-Request-Id', requestId);
    services.metrics.httpInFlight.inc();
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new ApiError(404, `No route ${ctx.method} ${ctx.path}. Every API route lives under ${API_PREFIX}.`, { code: 'ROUTE_NOT_FOUND' });
      }
    } catch (err) {
      sendError(ctx, toApiError(err, services.logger), 'native', requestId);
    } finally {
      services.metrics.httpInFlight.dec();
    }
  });

  const api = new Router({ prefix: API_PREFIX });
  for (const def of routes) {
    const method = def.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    api[method](def.path, routePipeline(def, services));
  }
  const apiRoutes: Koa.Middleware = compose<any>([
    api.routes(),
    api.allowedMethods({
      throw: true,
      methodNotAllowed: () => new ApiError(405, 'Method not allowed on this route.', { code: 'METHOD_NOT_ALLOWED' }),
      notImplemented: () => new ApiError(405, 'Method not supported.', { code: 'METHOD_NOT_ALLOWED' }),
    }),
  ]);
  const otherRoutes: Koa.Middleware = compose<any>([coreRoutes(services).routes(), ...extraRouters.flatMap((r) => [r.routes(), r.allowedMethods({ throw: true })])]);
  // One prefix test sends API traffic straight to its router: the hot path skips the probe and admin routers.
  app.use((ctx, next) => (ctx.path.startsWith(API_PREFIX + '/') ? apiRoutes(ctx, next) : otherRoutes(ctx, next)));
  return app;
}
