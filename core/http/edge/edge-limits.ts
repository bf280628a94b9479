import type Koa from 'koa';
import type { EdgeLimits } from '../../../config/load.ts';
import type { Counters } from '../../ports/counters.ts';
import type { Logger } from '../../logger.ts';
import type { Metrics } from '../../metrics.ts';

/**
 * The edge limits of SPEC "Limits", per source address: under /api/v1
 * 3000 requests a minute and 300 connections at once; on a stream route 500
 * requests a minute and 20 at once. The address comes from
 * core/http/edge/client-address.ts. Requests a minute are counted in the
 * counters store (Redis in a fleet, so every API process shares one count);
 * connections at once are counted by each API process, as nginx counts them
 * per instance: they are that process's sockets, a shared count would cost
 * two more store round trips on every request, and a process that dies
 * takes its count with it instead of leaving slots to expire.
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

/** Requests open at once per address, in this process. */
export class OpenRequests {
  private readonly open = new Map<string, number>();

  /** takes a place unless `max` are taken; returns the release function, or null */
  take(key: string, max: number): (() => void) | null {
    const count = this.open.get(key) ?? 0;
    if (count >= max) return null;
    this.open.set(key, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.open.get(key) ?? 1) - 1;
      if (left > 0) this.open.set(key, left);
      else this.open.delete(key);
    };
  }

  count(key: string): number {
    return this.open.get(key) ?? 0;
  }
}

export function edgeGate(zone: EdgeZone, limits: EdgeLimits, deps: EdgeDeps, open = new OpenRequests()): EdgeGate | null {
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
    if (limits.requestsPerMinute > 0) {
      try {
        const decision = await deps.counters.rateLimiter.consume(key, limits.requestsPerMinute, 60);
        if (!decision.allowed) return refused(ctx, 'rate');
      } catch (err) {
        storeFailed(err);
      }
    }
    if (limits.connections > 0) {
      const release = open.take(key, limits.connections);
      if (!release) return refused(ctx, 'connections');
      if (ctx.res.destroyed || ctx.res.writableFinished) release();
      else ctx.res.once('close', release);
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
