import test from 'ava';
import { createHmac } from 'node:crypto';
import { coreServices } from '../../core/services.ts';
import type { WebhooksStore } from '../../core/ports/webhooks.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait.ts';
import { makeTestPki, startReceiver, type Receiver, type Responder, type TestPki } from '../helpers/webhook-receiver.ts';

/**
 * The additions to SPEC's webhook routes (README "Webhooks"), on the real
 * platform with a real HTTPS receiver: `POST /webhooks/{id}/test` sends a
 * signed `webhook.test` event once; `POST /webhooks/{id}/disable` pauses an
 * endpoint consistently with SPEC's "disabled mid-flight: delivery then fails
 * endpoint_unavailable", and `/enable` resumes it.
 */
let pki: TestPki;
let p: TestPlatform;
let receiver: Receiver;
let store: WebhooksStore;
/**
 * Answers of the paths that need their own. The tests run at once: each one
 * wrapping and later restoring `receiver.respond` could undo another's
 * wrapper (the pause test's first attempt then succeeded, and it waited out
 * its 60 s for the failure).
 */
const answerFor = new Map<string, Responder>();

test.before(async () => {
  pki = makeTestPki();
  receiver = await startReceiver(pki.trusted);
  const answer = receiver.respond;
  receiver.respond = (r, res) => (answerFor.get(r.path) ?? answer)(r, res);
  p = await startTestPlatform({ WEBHOOK_ALLOW_LOOPBACK: '1', WEBHOOK_CA_FILE: pki.caFile, WEBHOOK_RETRY_SCALE: '0.1' });
  store = await p.platform.service(coreServices.webhooks);
});
test.after.always(async () => {
  await p?.stop();
  await receiver?.close();
  pki?.cleanup();
});

async function endpointFor(apiKey: string, path: string): Promise<{ id: string; secret: string }> {
  const res = await p.api('/webhooks', { method: 'POST', key: apiKey, json: { url: receiver.url(path) } });
  if (res.status !== 201) throw new Error(`register: ${res.status} ${await res.text()}`);
  return res.json() as Promise<{ id: string; secret: string }>;
}

/** The route's answer (20 calls per minute per key and operation: waits read the store instead). */
const deliveries = async (apiKey: string, id: string) => (await (await p.api(`/webhooks/${id}/deliveries`, { key: apiKey })).json()) as Array<Record<string, unknown>>;
const stored = (endpointId: string) => store.listDeliveries(endpointId, 10);
const until = <T>(what: string, check: () => Promise<T>, timeoutMs = 30_000) => waitFor(check, { what, timeoutMs, intervalMs: 100 });

test('a test event is sent once, signed like a job event, with type webhook.test, and its delivery is recorded DELIVERED', async (t) => {
  const acct = await p.bootstrap();
  const endpoint = await endpointFor(acct.apiKey, '/test-ok');
  const res = await p.api(`/webhooks/${endpoint.id}/test`, { method: 'POST', key: acct.apiKey });
  t.is(res.status, 202);
  const queued = await res.json();
  t.like(queued, { eventType: 'webhook.test', status: 'PENDING', attempts: 0 });
  t.regex(queued.eventId, /^evt_t_/);

  const request = (await until('the test delivery', async () => receiver.received.find((r) => r.path === '/test-ok')))!;
  const body = JSON.parse(request.rawBody.toString('utf8'));
  t.like(body, { id: queued.eventId, type: 'webhook.test', api_version: '2026-09-01', attempt: 1, data: { endpoint_id: endpoint.id } });
  t.is(request.headers['service-event-type'], 'webhook.test');
  const header = String(request.headers['service-signature']);
  const timestamp = /t=(\d+)/.exec(header)![1];
  t.true(header.split(',').includes(`v1=${createHmac('sha256', endpoint.secret).update(`${timestamp}.`).update(request.rawBody).digest('hex')}`));

  await until('the DELIVERED test record', async () => (await stored(endpoint.id))[0]?.status === 'DELIVERED');
  const [record] = await deliveries(acct.apiKey, endpoint.id);
  t.like(record, { id: queued.id, attempts: 1, lastStatusCode: 204, lastError: null });
});

test('a test event the receiver refuses is attempted once and recorded DEAD with its error, without an account notification', async (t) => {
  const acct = await p.bootstrap();
  const endpoint = await endpointFor(acct.apiKey, '/test-refused');
  answerFor.set('/test-refused', (_r, res) => void res.writeHead(503).end());
  const queued = await (await p.api(`/webhooks/${endpoint.id}/test`, { method: 'POST', key: acct.apiKey })).json();
  await until('the DEAD test record', async () => (await stored(endpoint.id))[0]?.status === 'DEAD');
  const [record] = await deliveries(acct.apiKey, endpoint.id);
  t.like(record, { id: queued.id, attempts: 1, lastStatusCode: 503, lastError: 'http_5xx', nextAttemptAt: null });
  await new Promise((r) => setTimeout(r, 500));
  t.is(receiver.received.filter((r) => r.path === '/test-refused').length, 1, 'never retried');
  t.deepEqual(await store.listNotifications(acct.accountId, 10), []);
});

test('disable pauses an endpoint: a delivery due while it is disabled fails endpoint_unavailable (DEAD), new jobs record nothing for it; enable resumes', async (t) => {
  const acct = await p.bootstrap();
  const endpoint = await endpointFor(acct.apiKey, '/pause');
  // The first job's first attempt fails, so its delivery is still PENDING (retry due 3 s later at this retry scale) when the endpoint is paused.
  let failFirst = true;
  answerFor.set('/pause', (_r, res) => {
    if (failFirst) {
      failFirst = false;
      return void res.writeHead(500).end();
    }
    res.writeHead(204).end();
  });

  const job = async (text: string) => (await (await p.api('/tts', { method: 'POST', key: acct.apiKey, json: { text } })).json()).jobId as string;
  await job('Bản ghi thứ nhất sẽ được gửi khi điểm nhận đang tạm dừng.');
  await until('the failed first attempt', async () => (await stored(endpoint.id))[0]?.lastError === 'http_5xx', 60_000);

  const paused = await p.api(`/webhooks/${endpoint.id}/disable`, { method: 'POST', key: acct.apiKey });
  t.is(paused.status, 200);
  t.like(await paused.json(), { id: endpoint.id, status: 'DISABLED' });
  t.like(await (await p.api(`/webhooks/${endpoint.id}`, { key: acct.apiKey })).json(), { status: 'DISABLED' });

  await until('the DEAD record', async () => (await stored(endpoint.id))[0]?.status === 'DEAD');
  const [dead] = await deliveries(acct.apiKey, endpoint.id);
  t.like(dead, { attempts: 2, lastError: 'endpoint_unavailable', lastStatusCode: null });
  t.is(receiver.received.filter((r) => r.path === '/pause').length, 1, 'nothing sent while paused');
  // SPEC: the DEAD delivery's notification appears in the account, read with the account's key.
  const notices = await (await p.api('/webhooks/notifications', { key: acct.apiKey })).json();
  t.like(notices.items[0], { kind: 'webhook.delivery.dead', subject: { endpointId: endpoint.id, deliveryId: dead.id } });
  t.regex(notices.items[0].message, /endpoint was deleted or disabled.*endpoint_unavailable/);
  t.is(notices.items[0].accountId, undefined);
  t.deepEqual((await (await p.api('/webhooks/notifications', { key: (await p.bootstrap()).apiKey })).json()).items, [], 'another account sees none of them');

  const test409 = await p.api(`/webhooks/${endpoint.id}/test`, { method: 'POST', key: acct.apiKey });
  t.is(test409.status, 409);
  t.is((await test409.json()).code, 'WEBHOOK_DISABLED');

  const whilePaused = await job('Bản ghi thứ hai xong khi điểm nhận vẫn tạm dừng, nên không có gì được ghi.');
  await until('the second job', async () => (await (await p.api(`/tts/${whilePaused}`, { key: acct.apiKey })).json()).status === 'completed', 60_000);
  await new Promise((r) => setTimeout(r, 1000));
  t.is((await deliveries(acct.apiKey, endpoint.id)).length, 1, 'no delivery recorded for a job that ended while paused');

  const resumed = await p.api(`/webhooks/${endpoint.id}/enable`, { method: 'POST', key: acct.apiKey });
  t.like(await resumed.json(), { status: 'ENABLED' });
  const third = await job('Bản ghi thứ ba được gửi sau khi điểm nhận hoạt động trở lại.');
  const request = await until('the delivery after enable', async () => receiver.received.find((r) => r.path === '/pause' && r.rawBody.includes(third)), 60_000);
  t.is(JSON.parse(request!.rawBody.toString('utf8')).data.job_id, third);
  await until('the third delivery recorded', async () => (await stored(endpoint.id))[0]?.status === 'DELIVERED');
  t.deepEqual((await deliveries(acct.apiKey, endpoint.id)).map((d) => d.status), ['DELIVERED', 'DEAD'], 'the dead delivery is not resent');
});

test('pause, resume and test of another account\'s endpoint answer 404', async (t) => {
  const owner = await p.bootstrap();
  const other = await p.bootstrap();
  const endpoint = await endpointFor(owner.apiKey, '/owned');
  for (const action of ['disable', 'enable', 'test']) {
    const res = await p.api(`/webhooks/${endpoint.id}/${action}`, { method: 'POST', key: other.apiKey });
    t.is(res.status, 404, action);
    t.is((await res.json()).code, 'WEBHOOK_NOT_FOUND');
  }
  t.like(await (await p.api(`/webhooks/${endpoint.id}`, { key: owner.apiKey })).json(), { status: 'ENABLED' });
});
