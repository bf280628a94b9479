import Koa from 'koa';
import type { IncomingMessage } from 'node:http';
import Router from '@koa/router';
import compose from 'koa-compose';
import { randomUUID } from 'node:crypto';
import type { MountDefinition, RouteDefinition } from '../plugin.ts';
import { routePipeline, type PipelineServices } from './route-pipeline.ts';
import { sendError, toApiError } from './envelopes.ts';
import { ApiError } from '../errors.ts';
import type { Drain } from './drain.ts';
import { clientAddress, trustedProxies } from './edge/client-address.ts';
import { edgeGate, edgeMiddleware } from './edge/edge-limits.ts';
import { closeWhenConnectionDrops } from './queued-response.ts';

export const API_PREFIX = '/api/v1';

export interface AppParts {
  routes: RouteDefinition[];
  mounts: MountDefinition[];
  /** probes, metrics and downloads: routers outside /api/v1 that core serves */
  coreRouters: Router[];
  drain: Drain;
  /** the client a call of this process's own API was made for (core/self-api.ts), null for other requests */
  selfCallClient?: (req: IncomingMessage) => string | null;
}

/** 405 and 501 from the router carry `Allow`; they become envelopes here so the header survives. */
function methodRefusal(ctx: Koa.Context): ApiError | null {
  if (ctx.body !== undefined || (ctx.status !== 405 && ctx.status !== 501)) return null;
  const allow = ctx.response.get('Allow');
  const headers = allow ? { Allow: allow } : undefined;
  return new ApiError(405, `Method ${ctx.method} is not allowed on ${ctx.path}.${allow ? ` Allowed: ${allow}.` : ''}`, { code: 'METHOD_NOT_ALLOWED', headers });
}

/** `/audio/speech` → `audio`; a path that starts with a parameter has no static first segment. */
function firstSegment(routePath: string): string | null {
  const segment = routePath.split('/')[1] ?? '';
  // Lower case: the routers match paths without regard to case, and so does the choice of router.
  return /^[\w.-]+$/.test(segment) ? segment.toLowerCase() : null;
}

/**
 * The API routes, one router per first path segment (`/tts`, `/tts/:jobId`
 * and `/tts/stream` share one): a router tests every route it holds against
 * each request, so a request is matched against its few neighbours instead of
 * every route of every plugin; a route without parameters, asked for by its
 * exact method and path, is answered without a router at all. Routes
 * starting with a parameter, if any, serve the requests whose first segment
 * no other route has.
 */
function groupedRoutes(routes: RouteDefinition[], handler: (def: RouteDefinition) => Koa.Middleware): Koa.Middleware {
  const routers = new Map<string | null, Router>();
  /** `GET /api/v1/balance` → its pipeline: a route without parameters, asked for by its exact method and path */
  const exact = new Map<string, Koa.Middleware>();
  for (const def of routes) {
    const segment = firstSegment(def.path);
    let router = routers.get(segment);
    if (!router) routers.set(segment, (router = new Router({ prefix: API_PREFIX })));
    const method = def.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    const pipeline = handler(def);
    router[method](def.path, pipeline);
    if (/^[\w./-]+$/.test(def.path)) exact.set(`${def.method} ${API_PREFIX}${def.path}`, pipeline);
  }
  const chains = new Map<string | null, Koa.Middleware>([...routers].map(([segment, router]) => [segment, compose<any>([router.routes(), router.allowedMethods()])]));
  const dynamic = chains.get(null);
  return (ctx, next) => {
    // The common case skips the router: what it would find is known (HEAD, other methods, a trailing slash or other case go to it).
    const direct = exact.get(`${ctx.method} ${ctx.path}`);
    if (direct) {
      ctx.params = {};
      return direct(ctx, next);
    }
    const segment = ctx.path.slice(API_PREFIX.length + 1).split('/', 1)[0]!.toLowerCase();
    const chain = chains.get(segment) ?? dynamic;
    return chain ? chain(ctx, next) : next();
  };
}

/**
 * The Koa application of the API listener: the client's address (forwarded
 * headers believed only from TRUSTED_PROXIES), request ids, in-flight
 * tracking and the error boundary for everything outside plugin routes,
 * then the edge limits and every plugin route under /api/v1, the mounts
 * plugins own (admin, OAuth, MCP, console) and core's own routers.
 */
export function buildKoaApp(services: PipelineServices, parts: AppParts): Koa {
  // Koa reads X-Forwarded-Proto and -Host only with `proxy`; clientAddress() has removed them unless a trusted proxy sent them.
  const app = new Koa({ proxy: true });
  app.silent = true;
  const { drain } = parts;
  const { edge } = services.config.limits;
  const edgeDeps = { counters: services.counters, logger: services.logger, metrics: services.metrics };
  const apiEdge = edgeMiddleware(edgeGate('api', edge.api, edgeDeps));
  const streamEdge = edgeGate('stream', edge.stream, edgeDeps);

  const mounts = [...parts.mounts].sort((a, b) => b.prefix.length - a.prefix.length);
  const mountOf = (path: string) => mounts.find((m) => path === m.prefix || path.startsWith(m.prefix.endsWith('/') ? m.prefix : m.prefix + '/'));
  // A path under a mount (/admin/v1, /oauth, …) is told about that mount's routes, not sent to /api/v1.
  const noRoute = (ctx: Koa.Context) => {
    const mount = mountOf(ctx.path);
    // The base itself (the start-up banner prints it) is not a route: say where the routes and their reference are.
    const atBase = ctx.path.replace(/\/+$/, '').toLowerCase() === API_PREFIX;
    const message = mount ? `No route ${ctx.method} ${ctx.path} among the routes under ${mount.prefix}.`
      : atBase ? `${API_PREFIX} is the base of the API, not a route: try GET ${API_PREFIX}/voices; every route is in the reference at /docs (${API_PREFIX}/openapi.json).`
        : `No route ${ctx.method} ${ctx.path}. Every API route lives under ${API_PREFIX}.`;
    return new ApiError(404, message, { code: 'ROUTE_NOT_FOUND' });
  };
  // What no route answered (a 405, the edge's refusals) is still in the envelope of the route at that path.
  const compatPaths = new Set(parts.routes.filter((def) => def.envelope === 'compat').map((def) => `${API_PREFIX}${def.path}`.toLowerCase()));
  const envelopeOf = (path: string) => (compatPaths.has(path.toLowerCase().replace(/\/+$/, '')) ? 'compat' : 'native');

  app.use(clientAddress(trustedProxies(services.config.trustedProxies), parts.selfCallClient));
  services.metrics.countInFlight(() => drain.openRequests);

  app.use(async (ctx, next) => {
    const requestId = randomUUID();
    ctx.state.requestId = requestId;
    ctx.state.startedAt = performance.now();
    ctx.state.stopping = drain.stopping;
    ctx.set('X-Request-Id', requestId);
    // During shutdown, finish this response and let the client reconnect elsewhere.
    if (drain.draining) ctx.set('Connection', 'close');
    const done = drain.begin();
    ctx.res.once('close', done);
    closeWhenConnectionDrops(ctx.req, ctx.res);
    try {
      await next();
      // A mount that wrote the response itself (ctx.respond = false) has answered, whatever its status.
      if (ctx.respond === false) return;
      const refusal = methodRefusal(ctx);
      if (refusal) throw refusal;
      if (ctx.status === 404 && ctx.body === undefined) throw noRoute(ctx);
    } catch (err) {
      sendError(ctx, toApiError(err, services.logger), envelopeOf(ctx.path), requestId);
    }
  });

  const apiRoutes = groupedRoutes(parts.routes, (def) => routePipeline(def, services, drain, def.stream ? streamEdge : null));
  const otherRoutes: Koa.Middleware = compose<any>(parts.coreRouters.flatMap((r) => [r.routes(), r.allowedMethods()]));
  // One prefix test sends API traffic straight to its router: the hot path skips the probe and mount routers.
  app.use((ctx, next) => {
    if (ctx.path.startsWith(API_PREFIX + '/')) return apiEdge(ctx, () => apiRoutes(ctx, next));
    const mount = mountOf(ctx.path);
    return mount ? mount.middleware(ctx, next) : otherRoutes(ctx, next);
  });
  return app;
}
