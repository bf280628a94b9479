import test, { type ExecutionContext } from 'ava';
import { createHmac } from 'node:crypto';
import { TOPICS } from '../../core/ports/bus.ts';
import type { WebhookDelivery } from '../../core/ports/webhooks.ts';
import { fanOut } from '../../pipelines/webhook-dispatcher/fanout.ts';
import { verifyWebhookSignature } from '../../pipelines/webhook-dispatcher/verify.ts';
import { makeTestPki, startReceiver, type Receiver, type TestPki } from '../helpers/webhook-receiver.ts';
import { ACCOUNT, T0, completedEvent, createWebhookHarness, failedEvent, type WebhookHarness } from '../helpers/webhook-harness.ts';
import { waitFor } from '../helpers/wait.ts';
import { createMetrics } from '../../core/metrics.ts';

/**
 * Delivery against real HTTPS receivers on 127.0.0.1 with a CA made at test
 * time (trusted through config.webhooks.caFile) and the test-only loopback
 * switch on. Time is a clock the test moves; signatures are checked here with
 * node:crypto, independently of the signing code.
 */
const MINUTE = 60_000;

let pki: TestPki;
test.before(() => {
  pki = makeTestPki();
});
test.after.always(() => pki?.cleanup());

async function setup(t: ExecutionContext, respond?: Receiver['respond']) {
  const h = createWebhookHarness();
  const receiver = await startReceiver(pki.trusted, respond);
  t.teardown(async () => {
    await h.close();
    await receiver.close();
  });
  return { h, receiver };
}

async function register(h: WebhookHarness, url: string, extra: { apiKeyId?: string } = {}) {
  return h.service.create(ACCOUNT, { url, events: ['tts.job.completed', 'tts.job.failed'], ...extra });
}

async function deliveryOf(h: WebhookHarness, endpointId: string): Promise<WebhookDelivery> {
  const [d] = await h.store.listDeliveries(endpointId, 1);
  return d;
}

/** SPEC "Signature", computed here from the raw bytes: every v1 of the header, checked against one secret. */
function v1Matches(header: string, rawBody: Buffer, secret: string): boolean {
  const parts = header.split(',').map((p) => p.split('=') as [string, string]);
  const t = parts.find(([k]) => k === 't')![1];
  const expected = createHmac('sha256', secret).update(Buffer.concat([Buffer.from(`${t}.`), rawBody])).digest('hex');
  return parts.some(([k, v]) => k === 'v1' && v === expected);
}

test('a completed event is delivered once, signed, with the body and headers SPEC lists', async (t) => {
  const { h, receiver } = await setup(t);
  const endpoint = await register(h, receiver.url());
  const event = completedEvent();
  h.blobs.add(event.audioKey);
  await fanOut(h.store, event, new Date(T0));
  const dispatcher = await h.dispatcher({ allowLoopback: true, caFile: pki.caFile });
  t.is(await dispatcher.runDue(), 1);

  t.is(receiver.received.length, 1);
  const [req] = receiver.received;
  t.is(req.method, 'POST');
  t.is(req.path, '/hooks/tts');
  t.is(req.headers['content-type'], 'application/json');
  t.is(req.headers['service-event-id'], event.eventId);
  t.is(req.headers['service-event-type'], 'tts.job.completed');
  t.regex(String(req.headers['service-delivery']), /^whdl_[0-9a-f]{32}$/);
  const signature = String(req.headers['service-signature']);
  t.regex(signature, /^t=\d+,v1=[0-9a-f]{64}$/);
  t.is(signature.split(',')[0], `t=${T0 / 1000}`, 't is the unix time of this attempt');
  t.true(v1Matches(signature, req.rawBody, endpoint.secret));
  t.like(verifyWebhookSignature({ rawBody: req.rawBody, header: signature, secrets: endpoint.secret, now: new Date(T0 + 1000) }), { valid: true });

  const body = JSON.parse(req.rawBody.toString('utf8'));
  t.deepEqual(Object.keys(body).sort(), ['api_version', 'attempt', 'created', 'data', 'id', 'type']);
  t.like(body, { id: event.eventId, type: 'tts.job.completed', api_version: '2026-09-01', created: T0 / 1000, attempt: 1 });
  t.regex(body.id, /^evt_/);
  t.deepEqual(Object.keys(body.data).sort(), [
    'audio_url', 'audio_url_expires_at', 'character_count', 'duration_seconds', 'engine', 'job_id', 'processing_time_ms', 'status', 'token_cost', 'voice_id',
  ]);
  t.like(body.data, { job_id: event.jobId, status: 'completed', voice_id: event.voiceId, engine: 'v4', character_count: 120, token_cost: 468, duration_seconds: 7.5, processing_time_ms: 1830 });
  t.is(body.data.audio_url_expires_at, new Date(T0 + 3600_000).toISOString(), 'audio_url expires one hour after the attempt');
  const link = new URL(body.data.audio_url);
  t.true(h.downloads.verify(event.audioKey, link.searchParams.get('expires')!, link.searchParams.get('signature')!, { now: new Date(T0 + 3599_000), job: event.jobId }));
  t.false(h.downloads.verify(event.audioKey, link.searchParams.get('expires')!, link.searchParams.get('signature')!, { now: new Date(T0 + 3601_000), job: event.jobId }));

  t.like(await deliveryOf(h, endpoint.id), {
    eventId: event.eventId, status: 'DELIVERED', attempts: 1, lastStatusCode: 204, lastError: null,
    lastAttemptAt: new Date(T0).toISOString(), deliveredAt: new Date(T0).toISOString(), nextAttemptAt: null,
  });
  h.clock.advance(60 * MINUTE);
  t.is(await dispatcher.runDue(), 0, 'a delivered event is not sent again');
});

test('a failed event carries error.code, error.message and refunded, and no audio', async (t) => {
  const { h, receiver } = await setup(t);
  await register(h, receiver.url());
  const event = failedEvent();
  await fanOut(h.store, event, new Date(T0));
  await (await h.dispatcher({ allowLoopback: true, caFile: pki.caFile })).runDue();
  const body = JSON.parse(receiver.received[0].rawBody.toString('utf8'));
  t.like(body, { id: event.eventId, type: 'tts.job.failed', attempt: 1 });
  t.deepEqual(body.data, {
    job_id: event.jobId, status: 'failed', voice_id: event.voiceId, engine: 'v4', character_count: 120, token_cost: 468,
    error: { code: 'synthesis_timeout', message: 'The synthesis did not finish in time.' }, refunded: true,
  });
});

test('the connection is pinned to the checked address; SNI and the certificate use the URL host name', async (t) => {
  const { h, receiver } = await setup(t);
  h.dns.set('receiver.test', ['127.0.0.1']);
  const endpoint = await register(h, receiver.url('/pinned', 'receiver.test'));
  await fanOut(h.store, failedEvent(), new Date(T0));
  const dispatcher = await h.dispatcher({ allowLoopback: true, caFile: pki.caFile });
  await dispatcher.runDue();
  t.is(receiver.received.length, 1, 'receiver.test exists only in the injected resolver, so the socket went to its checked address');
  t.is(receiver.received[0].servername, 'receiver.test');
  t.is(receiver.received[0].headers.host, `receiver.test:${receiver.port}`);

  // the name now resolves to a private address: refused at delivery, nothing sent
  h.dns.set('receiver.test', ['10.1.2.3']);
  await fanOut(h.store, failedEvent(), new Date(T0));
  await dispatcher.runDue();
  t.is(receiver.received.length, 1);
  t.like(await deliveryOf(h, endpoint.id), { status: 'PENDING', lastError: 'blocked_private_address', attempts: 1 });
});

test('a fully qualified host name with its final dot is delivered with the plain name in SNI and the certificate check', async (t) => {
  const { h, receiver } = await setup(t);
  h.dns.set('receiver.test.', ['127.0.0.1']);
  const endpoint = await register(h, receiver.url('/fqdn', 'receiver.test.'));
  await fanOut(h.store, failedEvent(), new Date(T0));
  await (await h.dispatcher({ allowLoopback: true, caFile: pki.caFile })).runDue();
  t.like(await deliveryOf(h, endpoint.id), { status: 'DELIVERED', lastError: null });
  t.is(receiver.received[0].servername, 'receiver.test');
});

test('six attempts at t+0, +0.5, +2.0, +5.5, +13.0 and +28.5 minutes, then DEAD with an account notification, never resent', async (t) => {
  const { h, receiver } = await setup(t, (_r, res) => void res.writeHead(500).end('down'));
  const endpoint = await register(h, receiver.url());
  const event = failedEvent();
  await fanOut(h.store, event, new Date(T0));
  const metrics = createMetrics(false);
  const dispatcher = await h.dispatcher({ allowLoopback: true, caFile: pki.caFile, metrics });
  const dead = async () => (await metrics.webhookDeliveriesDead.get()).values[0]?.value;

  const offsets = [0, 0.5, 2.0, 5.5, 13.0, 28.5];
  for (const [i, offset] of offsets.entries()) {
    h.clock.ms = T0 + offset * MINUTE - 1000;
    if (i > 0) t.is(await dispatcher.runDue(), 0, `attempt ${i + 1} waits for t+${offset} min`);
    h.clock.ms = T0 + offset * MINUTE;
    t.is(await dispatcher.runDue(), 1, `attempt ${i + 1} runs at t+${offset} min`);
    const record = await deliveryOf(h, endpoint.id);
    t.like(record, { attempts: i + 1, lastStatusCode: 500, lastError: 'http_5xx', lastAttemptAt: new Date(h.clock.ms).toISOString() });
    if (i < 5) t.is(record.nextAttemptAt, new Date(T0 + offsets[i + 1] * MINUTE).toISOString());
    t.is(await dead(), i < 5 ? 0 : 1, 'webhook_deliveries_dead_total counts the delivery once it is DEAD');
  }
  t.like(await deliveryOf(h, endpoint.id), { status: 'DEAD', attempts: 6, nextAttemptAt: null, deliveredAt: null });
  const [notification] = await h.store.listNotifications(ACCOUNT, 10);
  t.like(notification, { kind: 'webhook.delivery.dead', accountId: ACCOUNT, subject: { endpointId: endpoint.id, eventId: event.eventId } });

  h.clock.advance(24 * 60 * MINUTE);
  t.is(await dispatcher.runDue(), 0, 'a DEAD delivery is never resent');
  t.is(await dead(), 1);
  t.is(receiver.received.length, 6);
  t.deepEqual(receiver.received.map((r) => JSON.parse(r.rawBody.toString()).attempt), [1, 2, 3, 4, 5, 6]);
  t.true(receiver.received.every((r) => r.headers['service-event-id'] === event.eventId));
  t.is(new Set(receiver.received.map((r) => r.headers['service-delivery'])).size, 6, 'Service-Delivery identifies each HTTP attempt');
  receiver.received.forEach((r, i) => {
    t.true(String(r.headers['service-signature']).startsWith(`t=${(T0 + offsets[i] * MINUTE) / 1000},`));
    t.true(v1Matches(String(r.headers['service-signature']), r.rawBody, endpoint.secret));
  });
});

test('the schedule is durable: a new dispatcher on the same store makes the next attempt', async (t) => {
  let fail = true;
  const { h, receiver } = await setup(t, (_r, res) => void res.writeHead(fail ? 503 : 200).end());
  const endpoint = await register(h, receiver.url());
  await fanOut(h.store, failedEvent(), new Date(T0));
  const first = await h.dispatcher({ allowLoopback: true, caFile: pki.caFile });
  await first.runDue();
  await first.stop();
  fail = false;
  h.clock.advance(0.5 * MINUTE);
  const second = await h.dispatcher({ allowLoopback: true, caFile: pki.caFile });
  t.is(await second.runDue(), 1);
  t.like(await deliveryOf(h, endpoint.id), { status: 'DELIVERED', attempts: 2, lastStatusCode: 200, lastError: null });
});

test('during rotation each delivery carries one v1 per live secret; the old one stops after 24 hours', async (t) => {
  const { h, receiver } = await setup(t);
  const endpoint = await register(h, receiver.url());
  const rotated = await h.service.rotateSecret(ACCOUNT, endpoint.id);
  t.not(rotated.secret, endpoint.secret);
  const dispatcher = await h.dispatcher({ allowLoopback: true, caFile: pki.caFile });
  await fanOut(h.store, failedEvent(), new Date(h.clock.now()));
  await dispatcher.runDue();
  const during = receiver.received[0];
  const header = String(during.headers['service-signature']);
  t.is(header.split(',').filter((p) => p.startsWith('v1=')).length, 2);
  t.true(v1Matches(header, during.rawBody, endpoint.secret), 'the previous secret still verifies');
  t.true(v1Matches(header, during.rawBody, rotated.secret), 'the new secret verifies');

  h.clock.advance(24 * 60 * MINUTE + 1000);
  await fanOut(h.store, failedEvent(), new Date(h.clock.now()));
  await dispatcher.runDue();
  const after = receiver.received[1];
  const later = String(after.headers['service-signature']);
  t.is(later.split(',').filter((p) => p.startsWith('v1=')).length, 1);
  t.false(v1Matches(later, after.rawBody, endpoint.secret));
  t.true(v1Matches(later, after.rawBody, rotated.secret));
});

test('at most maxPerEndpoint attempts are in flight for one endpoint', async (t) => {
  const { h, receiver } = await setup(t, (_r, res) => void setTimeout(() => res.writeHead(204).end(), 40));
  const endpoint = await register(h, receiver.url());
  for (let i = 0; i < 24; i++) await fanOut(h.store, failedEvent(), new Date(T0));
  const dispatcher = await h.dispatcher({ allowLoopback: true, caFile: pki.caFile }, { maxPerEndpoint: 3, concurrency: 16 });
  t.is(await dispatcher.runDue(), 24);
  t.is(receiver.maxInFlight, 3);
  t.true((await h.store.listDeliveries(endpoint.id, 50)).every((d) => d.status === 'DELIVERED'));
});

test('only about 64 KB of a large answer is read; the delivery still counts', async (t) => {
  const { h, receiver } = await setup(t, (_r, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(Buffer.alloc(4 * 1024 * 1024, 'x'));
  });
  const endpoint = await register(h, receiver.url());
  await fanOut(h.store, failedEvent(), new Date(T0));
  await (await h.dispatcher({ allowLoopback: true, caFile: pki.caFile })).runDue();
  t.like(await deliveryOf(h, endpoint.id), { status: 'DELIVERED', lastStatusCode: 200 });
});

test('on a reused keep-alive connection a receiver that stops answering is a response_timeout', async (t) => {
  let answer = true;
  const { h, receiver } = await setup(t, (_r, res) => void (answer && res.writeHead(204).end()));
  const endpoint = await register(h, receiver.url());
  const dispatcher = await h.dispatcher({ allowLoopback: true, caFile: pki.caFile }, { totalTimeoutMs: 1500, maxPerEndpoint: 1 });
  await fanOut(h.store, failedEvent(), new Date(T0));
  await dispatcher.runDue();
  answer = false;
  await fanOut(h.store, failedEvent(), new Date(T0));
  await dispatcher.runDue();
  const [second, first] = await h.store.listDeliveries(endpoint.id, 2);
  t.like(first, { status: 'DELIVERED' });
  t.like(second, { status: 'PENDING', lastError: 'response_timeout', lastStatusCode: null });
});

test('the running dispatcher consumes tts.job.events and retries on its own (retryScale shortens the schedule)', async (t) => {
  let answers = 0;
  const { h, receiver } = await setup(t, (_r, res) => void res.writeHead(++answers <= 2 ? 502 : 204).end());
  const endpoint = await register(h, receiver.url());
  await h.dispatcher({ allowLoopback: true, caFile: pki.caFile, retryScale: 0.002 }, { autoStart: true, clock: { now: () => Date.now() }, pollIntervalMs: 20 });
  const event = failedEvent();
  await h.bus.publish(TOPICS.jobEvents, event.eventId, event);
  await h.bus.publish(TOPICS.jobEvents, event.eventId, event, 2);
  const delivered = await waitFor(async () => {
    const d = await deliveryOf(h, endpoint.id);
    return d?.status === 'DELIVERED' ? d : null;
  }, { what: 'delivery after two retries' });
  t.like(delivered, { attempts: 3, lastStatusCode: 204 });
  t.is((await h.store.listDeliveries(endpoint.id, 10)).length, 1, 'a redelivered bus message creates no second delivery');
  t.is(receiver.received.length, 3);
});
