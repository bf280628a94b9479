import test, { type ExecutionContext } from 'ava';
import type { JobEvent } from '../../core/ports/job-events.ts';
import { WEBHOOK_ERRORS, type WebhookDelivery, type WebhookError } from '../../core/ports/webhooks.ts';
import { fanOut } from '../../pipelines/webhook-dispatcher/fanout.ts';
import { makeTestPki, startBlackhole, startReceiver, type Receiver, type TestPki } from '../helpers/webhook-receiver.ts';
import { closedPort } from '../helpers/closed-port.ts';
import { ACCOUNT, T0, completedEvent, createWebhookHarness, failedEvent, type WebhookHarness } from '../helpers/webhook-harness.ts';

/**
 * Every `lastError` value of SPEC's delivery record, provoked for real against
 * HTTPS receivers on 127.0.0.1 (test CA trusted through config.webhooks.caFile,
 * loopback switch on unless the scenario is about refusing it).
 */
const MINUTE = 60_000;

let pki: TestPki;
test.before(() => {
  pki = makeTestPki();
});
test.after.always(() => pki?.cleanup());

async function deliveryOf(h: WebhookHarness, endpointId: string): Promise<WebhookDelivery> {
  const [d] = await h.store.listDeliveries(endpointId, 1);
  return d;
}

/** Each SPEC `lastError` value, provoked for real. Typed over the whole vocabulary, so none can be left out. */
type Scenario = (t: ExecutionContext) => Promise<{ delivery: WebhookDelivery; receiver?: Receiver; retried: boolean }>;

async function deliverOnce(t: ExecutionContext, url: string, options: { allowLoopback?: boolean; event?: JobEvent; prepare?: (h: WebhookHarness, endpointId: string) => Promise<void>; timeouts?: { totalTimeoutMs?: number; connectTimeoutMs?: number }; dns?: Record<string, string[]> } = {}) {
  const h = createWebhookHarness();
  t.teardown(() => h.close());
  for (const [name, addresses] of Object.entries(options.dns ?? {})) h.dns.set(name, addresses);
  // registration happens while the destination is acceptable; what changes is checked at delivery
  const endpoint = await h.store.createEndpoint({
    id: `we_${Math.random().toString(16).slice(2)}`, accountId: ACCOUNT, url, description: null, apiKeyId: null,
    events: ['tts.job.completed', 'tts.job.failed'], status: 'ENABLED', secrets: [{ secret: 'whsec_scenario', createdAt: new Date(T0).toISOString(), expiresAt: null }],
    secretPrefix: 'whsec_scen', createdAt: new Date(T0).toISOString(),
  });
  await fanOut(h.store, options.event ?? failedEvent(), new Date(T0));
  await options.prepare?.(h, endpoint.id);
  const dispatcher = await h.dispatcher({ allowLoopback: options.allowLoopback ?? true, caFile: pki.caFile }, options.timeouts ?? {});
  t.is(await dispatcher.runDue(), 1);
  return { h, delivery: await deliveryOf(h, endpoint.id) };
}

async function receiverAnswering(t: ExecutionContext, respond: Receiver['respond'], identity = pki.trusted): Promise<Receiver> {
  const receiver = await startReceiver(identity, respond);
  t.teardown(() => receiver.close());
  return receiver;
}

const SCENARIOS: Record<WebhookError, Scenario> = {
  http_4xx: async (t) => {
    const receiver = await receiverAnswering(t, (_r, res) => void res.writeHead(410).end());
    return { ...(await deliverOnce(t, receiver.url())), receiver, retried: true };
  },
  http_5xx: async (t) => {
    const receiver = await receiverAnswering(t, (_r, res) => void res.writeHead(503).end());
    return { ...(await deliverOnce(t, receiver.url())), receiver, retried: true };
  },
  redirect_refused: async (t) => {
    const receiver = await receiverAnswering(t, (r, res) => void (r.path === '/moved' ? res.writeHead(204).end() : res.writeHead(302, { location: '/moved' }).end()));
    const result = await deliverOnce(t, receiver.url());
    t.deepEqual(receiver.received.map((r) => r.path), ['/hooks/tts'], 'the redirect is not followed');
    return { ...result, receiver, retried: true };
  },
  connect_timeout: async (t) => {
    const blackhole = await startBlackhole();
    t.teardown(() => blackhole.close());
    return { ...(await deliverOnce(t, `https://127.0.0.1:${blackhole.port}/hook`, { timeouts: { connectTimeoutMs: 300 } })), retried: true };
  },
  response_timeout: async (t) => {
    const receiver = await receiverAnswering(t, () => undefined);
    return { ...(await deliverOnce(t, receiver.url(), { timeouts: { totalTimeoutMs: 2000 } })), receiver, retried: true };
  },
  connection_refused: async (t) => ({ ...(await deliverOnce(t, `https://127.0.0.1:${await closedPort()}/hook`)), retried: true }),
  dns_failure: async (t) => ({ ...(await deliverOnce(t, 'https://no-such-host.test/hook')), retried: true }),
  tls_failure: async (t) => {
    const receiver = await receiverAnswering(t, (_r, res) => void res.writeHead(204).end(), pki.untrusted);
    return { ...(await deliverOnce(t, receiver.url())), receiver, retried: true };
  },
  blocked_private_address: async (t) => {
    const receiver = await receiverAnswering(t, (_r, res) => void res.writeHead(204).end());
    return { ...(await deliverOnce(t, receiver.url(), { allowLoopback: false })), receiver, retried: true };
  },
  endpoint_unavailable: async (t) => {
    const receiver = await receiverAnswering(t, (_r, res) => void res.writeHead(204).end());
    const result = await deliverOnce(t, receiver.url(), { prepare: async (h, id) => void (await h.store.deleteEndpoint(id)) });
    t.is((await result.h.store.listNotifications(ACCOUNT, 5)).length, 1);
    return { ...result, receiver, retried: false };
  },
  audio_not_uploaded: async (t) => {
    const receiver = await receiverAnswering(t, (_r, res) => void res.writeHead(204).end());
    const event = completedEvent();
    const result = await deliverOnce(t, receiver.url(), { event });
    // the audio arrives later: the next attempt delivers
    result.h.blobs.add(event.audioKey);
    result.h.clock.advance(0.5 * MINUTE);
    const dispatcher = await result.h.dispatcher({ allowLoopback: true, caFile: pki.caFile });
    t.is(await dispatcher.runDue(), 1);
    t.like(await deliveryOf(result.h, result.delivery.endpointId), { status: 'DELIVERED', attempts: 2 });
    t.is(JSON.parse(receiver.received[0].rawBody.toString()).attempt, 2);
    return { ...result, receiver: undefined, retried: true };
  },
};

test('every lastError value of SPEC has a scenario below', (t) => {
  t.deepEqual(Object.keys(SCENARIOS).sort(), [...WEBHOOK_ERRORS].sort());
});

for (const [error, scenario] of Object.entries(SCENARIOS) as Array<[WebhookError, Scenario]>) {
  test(`lastError ${error} is recorded when it happens`, async (t) => {
    const { delivery, receiver, retried } = await scenario(t);
    t.like(delivery, { attempts: 1, lastError: error, deliveredAt: null });
    t.is(typeof delivery.lastDurationMs, 'number');
    t.is(delivery.status, retried ? 'PENDING' : 'DEAD');
    if (retried) t.is(delivery.nextAttemptAt, new Date(T0 + 0.5 * MINUTE).toISOString());
    const sent = error.startsWith('http_') || error === 'redirect_refused' || error === 'response_timeout';
    if (receiver) t.is(receiver.received.length, sent ? 1 : 0);
    if (error.startsWith('http_') || error === 'redirect_refused') t.truthy(delivery.lastStatusCode);
    else t.is(delivery.lastStatusCode, null);
  });
}
