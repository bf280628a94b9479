import Router from '@koa/router';
import { timingSafeEqual } from 'node:crypto';
import type { Metrics } from '../metrics.ts';
import { ApiError } from '../errors.ts';
import { isUnreachableDependency } from '../unreachable.ts';

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
  /** a ping of a store or broker core opened: whatever it throws, the store could not be reached */
  ping?: boolean;
}

interface CheckResult {
  name: string;
  ok: boolean;
  /** `unreachable`: a store or broker could not be reached; `failing`: the check failed otherwise */
  state: 'ok' | 'unreachable' | 'failing';
  message: string;
  degradable: boolean;
}

async function runCheck(probe: Probe): Promise<CheckResult> {
  const base = { name: probe.name, degradable: probe.degradable === true };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error('timed out')), CHECK_TIMEOUT_MS); });
  try {
    await Promise.race([probe.check(), timeout]);
    return { ...base, ok: true, state: 'ok', message: '' };
  } catch (err) {
    const state = probe.ping || isUnreachableDependency(err) ? 'unreachable' : 'failing';
    return { ...base, ok: false, state, message: err instanceof Error ? err.message : String(err) };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Readiness of this process: false until start-up finished and from the
 * first moment of shutdown, otherwise every registered check must answer
 * within 2 s (a degradable one only degrades). Checks must be cheap (a ping,
 * or a state kept by a background task), so readiness does not flap under
 * normal load. Each failure is named for what it is: `unreachable` when a
 * store or broker could not be reached (a ping, or an error
 * isUnreachableDependency recognises), `failing` otherwise. The ops port
 * (internal) shows each failure's message; the public API port serves
 * `withoutMessages()`, the states alone, so a check's error text (a path, a
 * host, a plugin's internals) never reaches a client.
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

  async report(options: { messages: boolean } = { messages: true }): Promise<{ ready: boolean; body: Record<string, unknown> }> {
    const results = await Promise.all(this.probes.map(runCheck));
    const checksOk = results.every((r) => r.ok || r.degradable);
    const degraded = results.some((r) => !r.ok);
    const ready = this.accepting && checksOk;
    const status = !this.accepting ? 'shutting_down' : !ready ? 'not_ready' : degraded ? 'degraded' : 'ready';
    const shown = (r: CheckResult) => {
      if (r.ok) return 'ok';
      const state = options.messages ? `${r.state}: ${r.message}` : r.state;
      return r.degradable ? `degraded, ${state}` : state;
    };
    return { ready, body: { status, checks: Object.fromEntries(results.map((r) => [r.name, shown(r)])) } };
  }

  /** The same readiness, reporting each check's state only (for the public API port). */
  withoutMessages(): Pick<Readiness, 'report'> {
    return { report: () => this.report({ messages: false }) };
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
export function probeRoutes(readiness: Pick<Readiness, 'report'>, metrics: Metrics, metricsAccess: { open: true } | { token: string | null }): Router {
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
