import test from 'ava';
import { createHmac } from 'node:crypto';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait.ts';
import { makeTestPki, startReceiver, type Receiver, type TestPki } from '../helpers/webhook-receiver.ts';

/**
 * The whole path on the real platform (all roles, embedded adapters): an
 * endpoint registered over HTTP, a `POST /tts` job rendered by the inference
 * worker, its `tts.job.completed` event consumed by the dispatcher and
 * delivered, signed, to a real HTTPS receiver whose CA the platform trusts
 * through WEBHOOK_CA_FILE; the loopback switch is on for this test only.
 */
let pki: TestPki;
let p: TestPlatform;
let receiver: Receiver;

test.before(async () => {
  pki = makeTestPki();
  receiver = await startReceiver(pki.trusted);
  p = await startTestPlatform({ WEBHOOK_ALLOW_LOOPBACK: '1', WEBHOOK_CA_FILE: pki.caFile });
});
test.after.always(async () => {
  await p?.stop();
  await receiver?.close();
  pki?.cleanup();
});

test('a POST /tts job is reported to the endpoint: signed, with a working one-hour audio_url, and recorded as DELIVERED', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 20_000 } });
  const created = await p.api('/webhooks', { method: 'POST', key: acct.apiKey, json: { url: receiver.url('/e2e') } });
  t.is(created.status, 201);
  const endpoint = await created.json();

  const submitted = await p.api('/tts', { method: 'POST', key: acct.apiKey, json: { text: 'Chúng tôi sẽ báo cho bạn qua webhook khi bản ghi âm này sẵn sàng.' } });
  t.is(submitted.status, 201);
  const { jobId } = await submitted.json();

  const request = (await waitFor(() => receiver.received.find((r) => r.path === '/e2e'), { timeoutMs: 60_000, what: 'the webhook delivery' }))!;
  const body = JSON.parse(request.rawBody.toString('utf8'));
  t.like(body, { type: 'tts.job.completed', api_version: '2026-09-01', attempt: 1, data: { job_id: jobId, status: 'completed' } });
  t.is(request.headers['service-event-id'], body.id);

  const header = String(request.headers['service-signature']);
  const timestamp = /t=(\d+)/.exec(header)![1];
  const expected = createHmac('sha256', endpoint.secret).update(`${timestamp}.`).update(request.rawBody).digest('hex');
  t.true(header.split(',').includes(`v1=${expected}`));

  const audio = await fetch(body.data.audio_url);
  t.is(audio.status, 200);
  t.is(Buffer.from(await audio.arrayBuffer()).subarray(0, 4).toString(), 'RIFF');
  const ttl = Date.parse(body.data.audio_url_expires_at) - Number(timestamp) * 1000;
  t.true(Math.abs(ttl - 3600_000) <= 1000);

  const deliveries = await waitFor(async () => {
    const list = await (await p.api(`/webhooks/${endpoint.id}/deliveries`, { key: acct.apiKey })).json();
    return list[0]?.status === 'DELIVERED' ? list : null;
  }, { what: 'the DELIVERED record' });
  t.like(deliveries[0], { eventId: body.id, eventType: 'tts.job.completed', attempts: 1, lastStatusCode: 204, lastError: null });
});

test("another account cannot see or delete the endpoint; the loopback switch does not let http through", async (t) => {
  const owner = await p.bootstrap();
  const other = await p.bootstrap();
  const endpoint = await (await p.api('/webhooks', { method: 'POST', key: owner.apiKey, json: { url: receiver.url('/other') } })).json();
  t.is((await p.api(`/webhooks/${endpoint.id}`, { key: other.apiKey })).status, 404);
  t.is((await p.api(`/webhooks/${endpoint.id}`, { method: 'DELETE', key: other.apiKey })).status, 404);
  t.is((await p.api(`/webhooks/${endpoint.id}`, { key: owner.apiKey })).status, 200);
  const http = await p.api('/webhooks', { method: 'POST', key: owner.apiKey, json: { url: `http://127.0.0.1:${receiver.port}/plain` } });
  t.is(http.status, 400);
  t.is((await http.json()).code, 'WEBHOOK_URL_NOT_HTTPS');
});
