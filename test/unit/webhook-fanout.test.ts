import test from 'ava';
import { TOPICS } from '../../core/ports/bus.ts';
import type { WebhookEndpoint } from '../../core/ports/webhooks.ts';
import { buildWebhookBody } from '../../pipelines/webhook-dispatcher/body.ts';
import { deliveriesFor } from '../../pipelines/webhook-dispatcher/fanout.ts';
import { retryDelayMs } from '../../pipelines/webhook-dispatcher/schedule.ts';
import { ACCOUNT, T0, completedEvent, createWebhookHarness, failedEvent } from '../helpers/webhook-harness.ts';

/** Which endpoints an event goes to, and what is built for each attempt. */
function endpoint(id: string, overrides: Partial<WebhookEndpoint> = {}): WebhookEndpoint {
  return {
    id, accountId: ACCOUNT, url: 'https://hooks.example.com/in', description: null, apiKeyId: null,
    events: ['tts.job.completed', 'tts.job.failed'], status: 'ENABLED', secrets: [], secretPrefix: 'whsec_x', createdAt: new Date(T0).toISOString(),
    ...overrides,
  };
}

test("an event goes to the account's ENABLED endpoints that want its type and whose apiKeyId filter matches", (t) => {
  const endpoints = [
    endpoint('we_all'),
    endpoint('we_same_key', { apiKeyId: 'key_main' }),
    endpoint('we_other_key', { apiKeyId: 'key_other' }),
    endpoint('we_disabled', { status: 'DISABLED' }),
    endpoint('we_completed_only', { events: ['tts.job.completed'] }),
    endpoint('we_other_account', { accountId: 'acct_other' }),
  ];
  const failed = deliveriesFor(failedEvent({ keyId: 'key_main' }), endpoints, new Date(T0));
  t.deepEqual(failed.map((d) => d.endpointId), ['we_all', 'we_same_key']);
  const completed = deliveriesFor(completedEvent({ keyId: 'key_other' }), endpoints, new Date(T0));
  t.deepEqual(completed.map((d) => d.endpointId), ['we_all', 'we_other_key', 'we_completed_only']);
  t.true(completed.every((d) => d.nextAttemptAt === new Date(T0).toISOString()), 'the first attempt is due at once (t+0)');
});

test('a redelivered bus message creates no second delivery record', async (t) => {
  const h = createWebhookHarness();
  t.teardown(() => h.close());
  h.dns.set('hooks.example.com', ['93.184.216.34']);
  const created = await h.service.create(ACCOUNT, { url: 'https://hooks.example.com/in', events: ['tts.job.failed'] });
  await h.dispatcher({ allowLoopback: false }, { autoStart: true, transport: async () => ({ ok: false, error: 'http_5xx', statusCode: 500, durationMs: 1, detail: '' }) });
  const event = failedEvent();
  for (const attempt of [1, 2, 3]) await h.bus.publish(TOPICS.jobEvents, event.eventId, event, attempt);
  await h.bus.publish(TOPICS.jobEvents, 'not-a-job-event', { hello: 'world' });
  t.is((await h.store.listDeliveries(created.id, 10)).length, 1);
});

test('the body is built per attempt: same id and created, attempt counts up, the submitted text is never included', (t) => {
  const event = completedEvent();
  const audio = { url: 'https://api.vieneu.test/files/x', expiresAt: '2026-11-21T11:00:00.000Z' };
  const first = buildWebhookBody(event, 1, audio);
  const third = buildWebhookBody(event, 3, audio);
  t.is(first.id, third.id);
  t.is(first.created, third.created);
  t.deepEqual([first.attempt, third.attempt], [1, 3]);
  t.false(JSON.stringify(first).includes('"text"'));
  t.throws(() => buildWebhookBody(event, 1, null), { message: /audio link/ });
});

test('retry gaps are 0.5, 1.5, 3.5, 7.5 and 15.5 minutes, none after the sixth attempt, and scale for tests', (t) => {
  t.deepEqual([1, 2, 3, 4, 5, 6].map((n) => retryDelayMs(n)), [30_000, 90_000, 210_000, 450_000, 930_000, null]);
  t.is(retryDelayMs(1, 0.01), 300);
});
