/**
 * The log phase settles a plugin route's money (Kong's log phase: plugins
 * only annotate). A route served by core's pipeline on the platform's own
 * services: a refusal or failure after a charge is refunded by core, usage
 * reports what billing moved whatever the route annotated, and a charging
 * route is in usage even when it is not marked tracked.
 */
import test from 'ava';
import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import type http from 'node:http';
import { randomUUID } from 'node:crypto';
import { pipelineServicesOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait.ts';
import { routePipeline } from '../../core/http/route-pipeline.ts';
import { Drain } from '../../core/http/drain.ts';
import { DomainError } from '../../core/errors.ts';
import type { RouteContext, RouteDefinition } from '../../core/plugin.ts';

let p: TestPlatform;
let server: http.Server;
const TOKENS = 40;

type Mode = 'ok' | 'refuse_after_charge' | 'throw_after_charge' | 'annotate_only' | 'partial_refund';

async function handler(ctx: RouteContext): Promise<void> {
  const mode = ctx.query.mode as Mode;
  const engine = 'v4';
  if (mode === 'annotate_only') {
    ctx.state.outcome.tokensCharged = TOKENS; // a figure no charge stands behind
    ctx.body = { ok: true };
    return;
  }
  const charge = await ctx.state.billing.charge({ engine, tokens: TOKENS });
  if (mode === 'refuse_after_charge') throw new DomainError('unprocessable', 'Refused after pricing.', { code: 'REFUSED_LATE' });
  if (mode === 'throw_after_charge') throw new Error('a bug after charging');
  if (mode === 'partial_refund') {
    await ctx.state.billing.refund(charge, 10);
    throw new DomainError('failed', 'Half done; the rest was refunded.');
  }
  ctx.body = { ok: true };
}

async function serve(def: RouteDefinition): Promise<string> {
  const services = await pipelineServicesOf(p);
  const drain = new Drain();
  const app = new Koa();
  app.use(async (ctx, next) => {
    ctx.state.requestId = randomUUID();
    ctx.state.startedAt = performance.now();
    ctx.state.stopping = drain.stopping;
    await next();
  });
  app.use(routePipeline(def, services, drain));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const route = (tracked: boolean): RouteDefinition => ({
  method: 'POST', path: '/probe', auth: 'required', name: 'probe_route', tracked, body: 'none', handler: handler as RouteDefinition['handler'],
});

test.before(async () => {
  p = await startTestPlatform();
});
test.after.always(async () => {
  server?.close();
  await p?.stop();
});

async function call(url: string, apiKey: string, mode: Mode) {
  const res = await fetch(`${url}/?mode=${mode}`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` } });
  return { status: res.status, body: await res.json() as Record<string, unknown> };
}

const used = async (apiKey: string) => ((await (await p.api('/balance', { key: apiKey })).json()) as { remaining: number }).remaining;

type Totals = { requests: number; tokenCost: number; ok: number; denied: number; error: number };

async function usageOf(apiKey: string, requests: number): Promise<Totals> {
  return waitFor(async (): Promise<Totals | undefined> => {
    const usage = await (await p.api('/usage', { key: apiKey })).json() as { totals: Totals };
    return usage.totals.requests >= requests ? usage.totals : undefined;
  }, { what: 'the outcome events' }) as Promise<Totals>;
}

test.serial('SPEC Billing rule 3: a route that refuses (4xx) or fails (5xx) after charging is refunded by core; usage counts them as denied and error', async (t) => {
  const url = await serve(route(true));
  const { apiKey } = await p.bootstrap();
  const start = await used(apiKey);
  const refused = await call(url, apiKey, 'refuse_after_charge');
  t.is(refused.status, 422);
  t.is(refused.body.code, 'REFUSED_LATE');
  const failed = await call(url, apiKey, 'throw_after_charge');
  t.is(failed.status, 500);
  t.regex(String(failed.body.message), /Nothing was charged/);
  t.is(await used(apiKey), start, 'both charges were given back');
  const ok = await call(url, apiKey, 'ok');
  t.is(ok.status, 200);
  t.is(await used(apiKey), start - TOKENS);
  const totals = await usageOf(apiKey, 3);
  t.like(totals, { ok: 1, denied: 1, error: 1 });
  // SPEC GET /usage: tokenCost is deducted before refunds; the two refunds are what the balance shows.
  t.is(totals.tokenCost, 3 * TOKENS);
  server.close();
});

test.serial('a charge the route refunded in part stays as the route left it (its decision), not refunded twice', async (t) => {
  const url = await serve(route(true));
  const { apiKey } = await p.bootstrap();
  const start = await used(apiKey);
  t.is((await call(url, apiKey, 'partial_refund')).status, 500);
  t.is(await used(apiKey), start - (TOKENS - 10));
  server.close();
});

test.serial('usage reports what billing moved: a route that only annotates tokens it never charged does not put them in usage', async (t) => {
  const url = await serve(route(true));
  const { apiKey } = await p.bootstrap();
  t.is((await call(url, apiKey, 'annotate_only')).status, 200);
  t.is((await call(url, apiKey, 'ok')).status, 200);
  const totals = await usageOf(apiKey, 2);
  t.is(totals.tokenCost, TOKENS, 'only the real charge');
  server.close();
});

test.serial('a route that charges is in usage even when it is not marked tracked: usage adds up to the ledger', async (t) => {
  const url = await serve(route(false));
  const { apiKey } = await p.bootstrap();
  t.is((await call(url, apiKey, 'ok')).status, 200);
  const totals = await usageOf(apiKey, 1);
  t.is(totals.tokenCost, TOKENS);
  server.close();
});
