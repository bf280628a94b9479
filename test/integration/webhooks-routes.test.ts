import test from 'ava';
import { hashKey } from '../../core/http/auth.ts';
import type { BackgroundWorker, RegisterEnv, RouteDefinition } from '../../core/plugin.ts';
import type { WebhooksStore } from '../../core/ports/webhooks.ts';
import type { Documents } from '../../core/ports/documents.ts';
import { coreServices } from '../../core/services.ts';
import webhooksPlugin from '../../plugins/webhooks/index.ts';
import dispatcherModule from '../../pipelines/webhook-dispatcher/index.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { fanOut } from '../../pipelines/webhook-dispatcher/fanout.ts';
import { failedEvent } from '../helpers/webhook-harness.ts';

/**
 * The management routes over HTTP, through core's real app and route phases
 * (auth, per-operation rate limit, validation, native error envelope), on
 * the embedded platform with only the webhooks plugin and no modules. Destinations here are
 * address literals, so the plugin's system resolver is never asked.
 */
const routes: RouteDefinition[] = [];
const workers: BackgroundWorker[] = [];
let platform: TestPlatform;
let documents: Documents;
let webhooks: WebhooksStore;
let base = '';

const KEY_A = `vn_sk_${'a'.repeat(32)}`;
const KEY_A2 = `vn_sk_${'c'.repeat(32)}`;
const KEY_B = `vn_sk_${'b'.repeat(32)}`;

async function addKey(id: string, accountId: string, plaintext: string): Promise<void> {
  await documents.keys.create({ id, accountId, grantId: `grant_${accountId}`, kind: 'live', hash: hashKey(plaintext), prefix: plaintext.slice(0, 10), name: null, createdAt: new Date().toISOString(), revokedAt: null });
}

/** What a feature registers, captured instead of served. */
function capture(): RegisterEnv<any, any> {
  return {
    deps: {}, config: {},
    route: (r) => void routes.push(r as RouteDefinition),
    mount: () => undefined,
    worker: (w) => void workers.push(w),
    readiness: () => undefined,
    authenticator: () => undefined,
  };
}

test.before(async () => {
  platform = await startTestPlatform({ PLUGINS: 'webhooks', MODULES: '' });
  documents = await platform.platform.service(coreServices.documents);
  webhooks = await platform.platform.service(coreServices.webhooks);
  base = `${platform.url}/api/v1`;
  await addKey('key_a', 'acct_a', KEY_A);
  await addKey('key_a2', 'acct_a', KEY_A2);
  await addKey('key_b', 'acct_b', KEY_B);
  const env = capture();
  await webhooksPlugin.register({ ...env, deps: { store: webhooks, documents, config: platform.config } });
  await dispatcherModule.register(env);
});
test.after.always(async () => {
  await platform?.stop();
});

async function call(method: string, path: string, key: string | null, json?: unknown) {
  const headers: Record<string, string> = {};
  if (key) headers.authorization = `Bearer ${key}`;
  if (json !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${path}`, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

test('the plugin registers the six SPEC operations and the four additions (dead-delivery notifications, pause, resume, test), key required, 10 to 30 per minute each; the dispatcher module a pipelines worker', (t) => {
  t.deepEqual(routes.map((r) => `${r.method} ${r.path} ${r.name}`), [
    'POST /webhooks webhooks_create',
    'GET /webhooks webhooks_list',
    'GET /webhooks/notifications webhooks_notifications',
    'GET /webhooks/:endpointId webhooks_get',
    'DELETE /webhooks/:endpointId webhooks_delete',
    'GET /webhooks/:endpointId/deliveries webhooks_deliveries',
    'POST /webhooks/:endpointId/rotate-secret webhooks_rotate_secret',
    'POST /webhooks/:endpointId/disable webhooks_disable',
    'POST /webhooks/:endpointId/enable webhooks_enable',
    'POST /webhooks/:endpointId/test webhooks_test',
  ]);
  for (const r of routes) {
    t.is(r.auth, 'required');
    t.true(r.perMinute! >= 10 && r.perMinute! <= 30);
    t.falsy(r.tracked);
  }
  t.deepEqual(workers.map((w) => [w.name, w.role]), [['dispatcher', 'pipelines']], 'the dispatcher module delivers in the pipelines role');
});

test('POST /webhooks returns the endpoint with its secret once; reads never show it again', async (t) => {
  const created = await call('POST', '/webhooks', KEY_A, { url: 'https://93.184.216.34/hooks', description: 'orders' });
  t.is(created.status, 201);
  const endpoint = created.body;
  t.regex(endpoint.id, /^we_/);
  t.like(endpoint, { url: 'https://93.184.216.34/hooks', description: 'orders', apiKeyId: null, status: 'ENABLED', events: ['tts.job.completed', 'tts.job.failed'] });
  t.regex(endpoint.secret, /^whsec_[A-Za-z0-9_-]{32}$/);
  t.is(endpoint.secretPrefix, endpoint.secret.slice(0, 10));

  const one = await call('GET', `/webhooks/${endpoint.id}`, KEY_A);
  t.is(one.status, 200);
  t.is(one.body.secret, undefined);
  t.like(one.body, { id: endpoint.id, secretPrefix: endpoint.secretPrefix, status: 'ENABLED' });
  const list = await call('GET', '/webhooks', KEY_A2);
  t.true(Array.isArray(list.body));
  t.true(list.body.some((e: { id: string }) => e.id === endpoint.id), 'every key of the account sees its endpoints');
  t.true(list.body.every((e: Record<string, unknown>) => !('secret' in e)));
});

test("another account's endpoint is 404 on every operation", async (t) => {
  const { body: endpoint } = await call('POST', '/webhooks', KEY_A, { url: 'https://8.8.8.8/in' });
  for (const [method, path] of [['GET', ''], ['DELETE', ''], ['GET', '/deliveries'], ['POST', '/rotate-secret']]) {
    const res = await call(method, `/webhooks/${endpoint.id}${path}`, KEY_B);
    t.is(res.status, 404, `${method} ${path}`);
    t.like(res.body, { statusCode: 404, code: 'WEBHOOK_NOT_FOUND' });
  }
  t.false((await call('GET', '/webhooks', KEY_B)).body.some((e: { id: string }) => e.id === endpoint.id));
  t.is((await call('GET', `/webhooks/${endpoint.id}`, KEY_A)).status, 200, 'still there for its owner');
});

test('destinations are checked at registration: http, credentials and private addresses are 400', async (t) => {
  const refused = async (url: string, code: string) => {
    const res = await call('POST', '/webhooks', KEY_A2, { url });
    t.is(res.status, 400, url);
    t.like(res.body, { statusCode: 400, code }, url);
    t.true(Array.isArray(res.body.message));
  };
  await refused('http://93.184.216.34/in', 'WEBHOOK_URL_NOT_HTTPS');
  await refused('https://u:p@93.184.216.34/in', 'WEBHOOK_URL_CREDENTIALS');
  await refused('https://2130706433/in', 'WEBHOOK_URL_BLOCKED');
  await refused('https://[::ffff:10.0.0.1]/in', 'WEBHOOK_URL_BLOCKED');
  // The URL parser drops a newline and escapes a NUL, so the endpoint would show one URL and deliver to another.
  for (const url of ['https://93.184.216.34/o\nk', 'https://93.184.216.34/ok\u0000x', 'https://93.184.216.34/a b']) await refused(url, 'WEBHOOK_URL_INVALID');
});

test('body validation: unknown event types, unknown fields and a missing url are 400 with one message per field', async (t) => {
  const res = await call('POST', '/webhooks', KEY_A2, { events: ['tts.job.started'], colour: 'blue' });
  t.is(res.status, 400);
  t.is(res.body.message.length, 3);
  t.is((await call('POST', '/webhooks', null, { url: 'https://8.8.8.8/' })).status, 401);
});

test('apiKeyId must be a key of the same account', async (t) => {
  const own = await call('POST', '/webhooks', KEY_A2, { url: 'https://8.8.4.4/in', apiKeyId: 'key_a' });
  t.is(own.status, 201);
  t.is(own.body.apiKeyId, 'key_a');
  const foreign = await call('POST', '/webhooks', KEY_A2, { url: 'https://8.8.4.4/in', apiKeyId: 'key_b' });
  t.is(foreign.status, 400);
  t.like(foreign.body, { code: 'WEBHOOK_API_KEY_UNKNOWN' });
});

test('rotate-secret returns a new secret once and says until when the previous one verifies', async (t) => {
  const { body: endpoint } = await call('POST', '/webhooks', KEY_B, { url: 'https://1.1.1.1/in' });
  const rotated = await call('POST', `/webhooks/${endpoint.id}/rotate-secret`, KEY_B);
  t.is(rotated.status, 200);
  t.regex(rotated.body.secret, /^whsec_/);
  t.not(rotated.body.secret, endpoint.secret);
  t.is(rotated.body.secretPrefix, rotated.body.secret.slice(0, 10));
  const hours = (Date.parse(rotated.body.previousSecretExpiresAt) - Date.now()) / 3600_000;
  t.true(hours > 23.9 && hours <= 24);
  t.is((await call('GET', `/webhooks/${endpoint.id}`, KEY_B)).body.secretPrefix, rotated.body.secretPrefix);
});

test('deliveries are an array of SPEC delivery records; DELETE removes the endpoint', async (t) => {
  const { body: endpoint } = await call('POST', '/webhooks', KEY_B, { url: 'https://9.9.9.9/in' });
  await fanOut(webhooks, failedEvent({ accountId: 'acct_b', keyId: 'key_b' }), new Date());
  const deliveries = await call('GET', `/webhooks/${endpoint.id}/deliveries?limit=10`, KEY_B);
  t.is(deliveries.status, 200);
  t.is(deliveries.body.length, 1);
  t.deepEqual(Object.keys(deliveries.body[0]).sort(), [
    'attempts', 'createdAt', 'deliveredAt', 'eventId', 'eventType', 'id', 'lastAttemptAt', 'lastDurationMs', 'lastError', 'lastStatusCode', 'nextAttemptAt', 'status',
  ]);
  t.like(deliveries.body[0], { eventType: 'tts.job.failed', status: 'PENDING', attempts: 0, deliveredAt: null });
  t.is((await call('GET', `/webhooks/${endpoint.id}/deliveries?limit=0`, KEY_B)).status, 400);

  const removed = await call('DELETE', `/webhooks/${endpoint.id}`, KEY_B);
  t.deepEqual([removed.status, removed.body], [200, { id: endpoint.id, deleted: true }]);
  t.is((await call('GET', `/webhooks/${endpoint.id}`, KEY_B)).status, 404);
  t.is((await call('DELETE', `/webhooks/${endpoint.id}`, KEY_B)).status, 404);
});

test('each operation has its own per-key limit of 20 per minute', async (t) => {
  const KEY_C = `vn_sk_${'d'.repeat(32)}`;
  await addKey('key_c', 'acct_c', KEY_C);
  for (let i = 0; i < 20; i++) t.is((await call('GET', '/webhooks', KEY_C)).status, 200);
  const limited = await call('GET', '/webhooks', KEY_C);
  t.is(limited.status, 429);
  t.is(limited.headers.get('x-ratelimit-limit'), '20');
  t.truthy(limited.headers.get('retry-after'));
  t.is((await call('GET', '/webhooks/we_unknown', KEY_C)).status, 404, 'another operation has its own budget');
});
