import type Koa from 'koa';
import type { EdgeLimits } from '../../../config/load.ts';
import type { Counters } from '../../ports/counters.ts';
import type { Logger } from '../../logger.ts';
import type { Metrics } from '../../metrics.ts';

/**
 * The edge limits of SPEC "Limits", per source address: under /api/v1
 * 3000 requests a minute and 300 connections at once; on a stream route 500
 * requests a minute and 20 at once. Counted in the counters store (Redis in
 * a fleet, so every API process shares one count), the address taken from
 * core/http/edge/client-address.ts.
 *
 * When no ingress is in front, this is the edge, and it answers as the edge
 * does (SPEC "Tell-apart rules for 429 and 503"): a bare 429 (requests per
 * minute) or 503 (connections at once) with a small HTML page and none of
 * the X-RateLimit-* headers or Retry-After, which belong to the
 * application's per-key limiter. A client that follows SPEC then backs off
 * and reduces concurrency instead of blaming its key.
 *
 * A counters store that cannot be reached lets the request through (logged,
 * at most once a minute): the edge protects the service, it must not be
 * the reason it is down.
 */

/** A held connection slot outlives its request only when a process dies; then it expires. */
const SLOT_TTL_SECONDS = 3600;
const STORE_WARNING_INTERVAL_MS = 60_000;

export type EdgeZone = 'api' | 'stream';

export interface EdgeDeps {
  counters: Counters;
  logger: Logger;
  metrics: Metrics;
}

/** Admits a request or writes the edge's refusal; false when refused. */
export type EdgeGate = (ctx: Koa.Context) => Promise<boolean>;

const REFUSALS = {
  429: 'Too Many Requests',
  503: 'Service Temporarily Unavailable',
} as const;

function refuse(ctx: Koa.Context, status: 429 | 503): void {
  const title = `${status} ${REFUSALS[status]}`;
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = `<html>\n<head><title>${title}</title></head>\n<body>\n<center><h1>${title}</h1></center>\n<hr><center>edge</center>\n</body>\n</html>\n`;
}

export function edgeGate(zone: EdgeZone, limits: EdgeLimits, deps: EdgeDeps): EdgeGate | null {
  if (limits.requestsPerMinute === 0 && limits.connections === 0) return null;
  let lastWarning = 0;
  const storeFailed = (err: unknown) => {
    const now = Date.now();
    if (now - lastWarning < STORE_WARNING_INTERVAL_MS) return;
    lastWarning = now;
    deps.logger.warn('edge limits skipped: the counters store did not answer', { zone, err: err as Error });
  };
  const refused = (ctx: Koa.Context, limit: 'rate' | 'connections') => {
    deps.metrics.edgeRefusals.inc({ zone, limit });
    refuse(ctx, limit === 'rate' ? 429 : 503);
    return false;
  };

  return async (ctx) => {
    const key = `edge:${zone}:${ctx.ip}`;
    try {
      if (limits.requestsPerMinute > 0) {
        const decision = await deps.counters.rateLimiter.consume(key, limits.requestsPerMinute, 60);
        if (!decision.allowed) return refused(ctx, 'rate');
      }
      if (limits.connections > 0) {
        const held = await deps.counters.slots.acquire(key, limits.connections, SLOT_TTL_SECONDS);
        if (!held.ok || !held.slotId) return refused(ctx, 'connections');
        const slotId = held.slotId;
        const release = () => void deps.counters.slots.release(key, slotId).catch(storeFailed);
        if (ctx.res.destroyed || ctx.res.writableFinished) release();
        else ctx.res.once('close', release);
      }
    } catch (err) {
      storeFailed(err);
    }
    return true;
  };
}

/** The gate as a Koa middleware in front of `next`. */
export function edgeMiddleware(gate: EdgeGate | null): Koa.Middleware {
  if (!gate) return (_ctx, next) => next();
  return async (ctx, next) => {
    if (await gate(ctx)) await next();
  };
}
