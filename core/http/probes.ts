import Router from '@koa/router';
import { timingSafeEqual } from 'node:crypto';
import type { Metrics } from '../metrics.ts';
import { ApiError } from '../errors.ts';

const CHECK_TIMEOUT_MS = 2000;

export interface Probe {
  name: string;
  check(): Promise<void>;
  /**
   * The process keeps serving without it (Redis: each process counts for
   * itself; ClickHouse: only GET /usage fails): reported as degraded, and
   * the process stays ready. Failing readiness for it took every API pod out
   * of its Service during an outage the API itself rides through.
   */
  degradable?: boolean;
}

/**
 * Readiness of this process: false until start-up finished and from the
 * first moment of shutdown, otherwise every registered check must answer.
 * Checks must be cheap (a ping, or a state kept by a background task), so
 * readiness does not flap under normal load.
 */
export class Readiness {
  private accepting = false;
  private readonly probes: Probe[] = [];

  add(probe: Probe): void {
    this.probes.push(probe);
  }

  set(accepting: boolean): void {
    this.accepting = accepting;
  }

  async report(): Promise<{ ready: boolean; body: Record<string, unknown> }> {
    const results = await Promise.all(this.probes.map(async (p): Promise<[string, string, boolean]> => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error('timed out')), CHECK_TIMEOUT_MS); });
      try {
        await Promise.race([p.check(), timeout]);
        return [p.name, 'ok', true];
      } catch (err) {
        const message = `unreachable: ${(err as Error).message}`;
        return [p.name, p.degradable ? `degraded, ${message}` : message, p.degradable === true];
      } finally {
        clearTimeout(timer);
      }
    }));
    const checksOk = results.every(([, , ok]) => ok);
    const degraded = results.some(([, s]) => s !== 'ok');
    const ready = this.accepting && checksOk;
    const status = !this.accepting ? 'shutting_down' : !ready ? 'not_ready' : degraded ? 'degraded' : 'ready';
    return { ready, body: { status, checks: Object.fromEntries(results.map(([name, s]) => [name, s])) } };
  }
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * `/healthz` (alive), `/readyz` (ready for traffic) and `/metrics`. The ops
 * listener of every role serves all three openly; the API listener serves
 * the probes, and `/metrics` only to a bearer of METRICS_TOKEN when one is set.
 */
export function probeRoutes(readiness: Readiness, metrics: Metrics, metricsAccess: { open: true } | { token: string | null }): Router {
  const router = new Router();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    const { ready, body } = await readiness.report();
    ctx.status = ready ? 200 : 503;
    ctx.body = body;
  });
  router.get('/metrics', async (ctx) => {
    if (!('open' in metricsAccess)) {
      const token = metricsAccess.token;
      if (!token) throw new ApiError(404, 'Metrics are served on the ops port (OPS_PORT); set METRICS_TOKEN to serve them here too.', { code: 'ROUTE_NOT_FOUND' });
      const match = /^Bearer\s+(.+)$/i.exec(ctx.get('authorization'));
      if (!match || !sameSecret(match[1].trim(), token)) throw new ApiError(401, 'Send Authorization: Bearer <METRICS_TOKEN> to read metrics.', { code: 'METRICS_TOKEN_REQUIRED' });
    }
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });
  return router;
}
