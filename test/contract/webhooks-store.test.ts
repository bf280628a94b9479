import test, { type ExecutionContext } from 'ava';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { openEmbeddedDb, openMemoryDb } from '../../core/adapters/embedded-db.ts';
import { createSqliteWebhooks } from '../../core/adapters/webhooks/sqlite.ts';
import { createMongoWebhooks } from '../../core/adapters/webhooks/mongo.ts';
import { rotatedSecrets } from '../../core/adapters/webhooks/secrets.ts';
import type { JobEvent } from '../../core/ports/job-events.ts';
import type { AttemptRecord, ClaimRequest, NewDelivery, WebhookEndpoint, WebhooksStore } from '../../core/ports/webhooks.ts';

/** The webhooks store contract, run against every adapter. */
type Harness = { store: WebhooksStore; close(): Promise<void> };
type Open = () => Promise<Harness>;

const T0 = Date.parse('2026-11-21T10:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

function endpoint(overrides: Partial<WebhookEndpoint> = {}): WebhookEndpoint {
  return {
    id: `we_${randomUUID().slice(0, 8)}`, accountId: 'acct_1', url: 'https://hooks.example.com/in', description: null,
    apiKeyId: null, events: ['tts.job.completed', 'tts.job.failed'], status: 'ENABLED',
    secrets: [{ secret: 'whsec_first', createdAt: iso(T0), expiresAt: null }], secretPrefix: 'whsec_firs', createdAt: iso(T0),
    ...overrides,
  };
}

function event(jobId: string): JobEvent {
  return {
    type: 'tts.job.failed', eventId: `evt_f_${jobId}`, jobId, accountId: 'acct_1', keyId: 'key_1', voiceId: 'v', engine: 'v4',
    characterCount: 50, tokenCost: 195, at: iso(T0), error: { code: 'synthesis_failed', message: 'boom' }, refunded: true,
  };
}

function delivery(endpointId: string, jobId: string, dueMs = T0, accountId = 'acct_1'): NewDelivery {
  const e = event(jobId);
  return { id: `wd_${randomUUID().slice(0, 12)}`, endpointId, accountId, eventId: e.eventId, eventType: e.type, payload: e, createdAt: iso(T0), nextAttemptAt: iso(dueMs) };
}

function claim(nowMs: number, overrides: Partial<ClaimRequest> = {}): ClaimRequest {
  return {
    now: new Date(nowMs), leaseUntil: new Date(nowMs + 60_000), leaseToken: randomUUID(), limit: 100,
    maxPerEndpoint: 100, inFlight: new Map(), maxPerAccount: 100, inFlightByAccount: new Map(), ...overrides,
  };
}

function failed(id: string, leaseToken: string, attempts: number, nextMs: number | null): AttemptRecord {
  return {
    id, leaseToken, status: nextMs === null ? 'DEAD' : 'PENDING', attempts, nextAttemptAt: nextMs === null ? null : iso(nextMs),
    lastStatusCode: 500, lastError: 'http_5xx', lastDurationMs: 12, lastAttemptAt: iso(T0), deliveredAt: null,
  };
}

function webhooksContract(adapter: string, open: Open): void {
  const it = (rule: string, body: (store: WebhooksStore, t: ExecutionContext) => Promise<void>) =>
    test(`${adapter}: ${rule}`, async (t) => {
      const harness = await open();
      t.teardown(() => harness.close());
      await body(harness.store, t);
    });

  it('endpoints are created, read, listed per account, disabled and deleted', async (store, t) => {
    const a = await store.createEndpoint(endpoint({ id: 'we_a' }));
    await store.createEndpoint(endpoint({ id: 'we_b', createdAt: iso(T0 + 1) }));
    await store.createEndpoint(endpoint({ id: 'we_other', accountId: 'acct_2' }));
    t.deepEqual(await store.getEndpoint('we_a'), a);
    t.deepEqual((await store.listEndpoints('acct_1')).map((e) => e.id), ['we_a', 'we_b']);
    t.true(await store.setEndpointStatus('we_a', 'DISABLED'));
    t.is((await store.getEndpoint('we_a'))?.status, 'DISABLED');
    t.true(await store.deleteEndpoint('we_a'));
    t.false(await store.deleteEndpoint('we_a'));
    t.is(await store.getEndpoint('we_a'), null);
  });

  it('rotation makes the new secret current and keeps the previous one until its expiry', async (store, t) => {
    await store.createEndpoint(endpoint({ id: 'we_r' }));
    const day = 24 * 3600_000;
    const first = await store.rotateSecret('we_r', { secret: 'whsec_second', createdAt: iso(T0), expiresAt: null }, iso(T0 + day), iso(T0));
    t.deepEqual(first?.secrets.map((s) => [s.secret, s.expiresAt]), [['whsec_second', null], ['whsec_first', iso(T0 + day)]]);
    t.is(first?.secretPrefix, 'whsec_seco');
    // a second rotation a day and a bit later drops the expired first secret and keeps the second for 24 h
    const later = T0 + day + 1000;
    const second = await store.rotateSecret('we_r', { secret: 'whsec_third', createdAt: iso(later), expiresAt: null }, iso(later + day), iso(later));
    t.deepEqual(second?.secrets.map((s) => [s.secret, s.expiresAt]), [['whsec_third', null], ['whsec_second', iso(later + day)]]);
    t.deepEqual((await store.getEndpoint('we_r'))?.secrets, second?.secrets);
    t.is(await store.rotateSecret('we_missing', { secret: 'x', createdAt: iso(T0), expiresAt: null }, iso(T0), iso(T0)), null);
  });

  it('"the previous one verifies for 24 more hours": twenty quick rotations leave exactly the current secret and the one before it', async (store, t) => {
    await store.createEndpoint(endpoint({ id: 'we_many' }));
    const day = 24 * 3600_000;
    let last: WebhookEndpoint | null = null;
    for (let i = 1; i <= 20; i++) {
      const at = T0 + i * 60_000;
      last = await store.rotateSecret('we_many', { secret: `whsec_${i}`, createdAt: iso(at), expiresAt: null }, iso(at + day), iso(at));
    }
    const expected = [['whsec_20', null], ['whsec_19', iso(T0 + 20 * 60_000 + day)]];
    t.deepEqual(last?.secrets.map((s) => [s.secret, s.expiresAt]), expected);
    t.deepEqual((await store.getEndpoint('we_many'))?.secrets.map((s) => [s.secret, s.expiresAt]), expected);
    t.is(last?.secretPrefix, 'whsec_20');
  });

  it('enqueueing is idempotent on (eventId, endpointId): bus redelivery creates nothing new', async (store, t) => {
    const d = delivery('we_1', 'job_1');
    t.is(await store.enqueueDeliveries([d, delivery('we_2', 'job_1')]), 2);
    t.is(await store.enqueueDeliveries([{ ...d, id: 'wd_other_id' }]), 0);
    t.is(await store.getDelivery('wd_other_id'), null);
    t.like(await store.getDelivery(d.id), { status: 'PENDING', attempts: 0, nextAttemptAt: d.nextAttemptAt, lastError: null, deliveredAt: null });
    t.deepEqual((await store.getDelivery(d.id))?.payload, d.payload);
  });

  it('only due deliveries are claimed, earliest first, and a leased one is not claimed again', async (store, t) => {
    const late = delivery('we_1', 'job_late', T0 + 5000);
    const early = delivery('we_1', 'job_early', T0 - 5000);
    await store.enqueueDeliveries([late, early]);
    t.deepEqual((await store.claimDue(claim(T0))).map((c) => c.delivery.id), [early.id]);
    t.deepEqual(await store.claimDue(claim(T0 + 1000)), []);
    t.deepEqual((await store.claimDue(claim(T0 + 5000))).map((c) => c.delivery.id), [late.id]);
  });

  it('two dispatchers claiming at once never get the same delivery', async (store, t) => {
    await store.enqueueDeliveries(Array.from({ length: 40 }, (_, i) => delivery(`we_${i % 4}`, `job_${i}`)));
    const [a, b] = await Promise.all([store.claimDue(claim(T0, { limit: 25 })), store.claimDue(claim(T0, { limit: 25 }))]);
    const ids = [...a, ...b].map((c) => c.delivery.id);
    t.is(ids.length, 40);
    t.is(new Set(ids).size, 40);
  });

  it('an expired lease is claimable again, and the stale holder can no longer record its attempt', async (store, t) => {
    const d = delivery('we_1', 'job_crash');
    await store.enqueueDeliveries([d]);
    const [first] = await store.claimDue(claim(T0));
    t.deepEqual(await store.claimDue(claim(T0 + 59_000)), []);
    const [second] = await store.claimDue(claim(T0 + 60_000));
    t.is(second.delivery.id, d.id);
    t.false(await store.recordAttempt(failed(d.id, first.leaseToken, 1, T0 + 90_000)));
    t.true(await store.recordAttempt(failed(d.id, second.leaseToken, 1, T0 + 90_000)));
    t.like(await store.getDelivery(d.id), { attempts: 1, lastError: 'http_5xx', lastStatusCode: 500, nextAttemptAt: iso(T0 + 90_000) });
    t.deepEqual(await store.claimDue(claim(T0 + 89_000)), [], 'the rescheduled attempt waits for its time');
    t.is((await store.claimDue(claim(T0 + 90_000))).length, 1);
  });

  it('claims respect the room per endpoint and skip endpoints already saturated', async (store, t) => {
    await store.enqueueDeliveries([
      ...Array.from({ length: 10 }, (_, i) => delivery('we_busy', `busy_${i}`, T0 - 1000)),
      ...Array.from({ length: 3 }, (_, i) => delivery('we_quiet', `quiet_${i}`, T0)),
    ]);
    const first = await store.claimDue(claim(T0, { maxPerEndpoint: 2, inFlight: new Map([['we_busy', 1]]) }));
    t.deepEqual(first.map((c) => c.delivery.endpointId).sort(), ['we_busy', 'we_quiet', 'we_quiet']);
    const second = await store.claimDue(claim(T0, { maxPerEndpoint: 2, inFlight: new Map([['we_busy', 2], ['we_quiet', 1]]) }));
    t.deepEqual(second.map((c) => c.delivery.endpointId), ['we_quiet'], 'the busy endpoint is skipped, the quiet one has room for one');
    t.is((await store.claimDue(claim(T0, { limit: 3 }))).length, 3, 'limit caps the batch');
  });

  it('claims respect the room per account: one account\'s many endpoints cannot take every slot, and a saturated account is skipped', async (store, t) => {
    // The noisy account's deliveries are all due first, one per endpoint, as many endpoints as the whole scan.
    await store.enqueueDeliveries([
      ...Array.from({ length: 300 }, (_, i) => delivery(`we_noisy_${i}`, `noisy_${i}`, T0 - 60_000 + i, 'acct_noisy')),
      delivery('we_calm', 'calm_1', T0, 'acct_calm'),
    ]);
    const first = await store.claimDue(claim(T0, { limit: 10, maxPerEndpoint: 8, maxPerAccount: 4, inFlightByAccount: new Map([['acct_noisy', 1]]) }));
    t.deepEqual(first.map((c) => c.delivery.accountId).sort(), ['acct_calm', 'acct_noisy', 'acct_noisy', 'acct_noisy']);
    const second = await store.claimDue(claim(T0, { limit: 10, maxPerAccount: 4, inFlightByAccount: new Map([['acct_noisy', 4]]) }));
    t.deepEqual(second, [], 'the noisy account is full and the calm one has nothing left');
  });

  it('a delivered record is final and carries deliveredAt', async (store, t) => {
    const d = delivery('we_1', 'job_ok');
    await store.enqueueDeliveries([d]);
    const [c] = await store.claimDue(claim(T0));
    t.true(await store.recordAttempt({ ...failed(d.id, c.leaseToken, 1, null), status: 'DELIVERED', lastError: null, lastStatusCode: 204, deliveredAt: iso(T0) }));
    t.like(await store.getDelivery(d.id), { status: 'DELIVERED', deliveredAt: iso(T0), nextAttemptAt: null, lastStatusCode: 204 });
    t.deepEqual(await store.claimDue(claim(T0 + 3600_000)), []);
    t.false(await store.recordAttempt(failed(d.id, c.leaseToken, 2, T0)), 'a finished record is not written again');
  });

  it('a DEAD record writes one account notification and is never claimed again', async (store, t) => {
    const d = delivery('we_1', 'job_dead');
    await store.enqueueDeliveries([d]);
    const [c] = await store.claimDue(claim(T0));
    const notification = { id: `ntf_${d.id}`, accountId: 'acct_1', kind: 'webhook.delivery.dead' as const, message: 'not delivered', subject: { deliveryId: d.id }, createdAt: iso(T0) };
    t.true(await store.recordAttempt({ ...failed(d.id, c.leaseToken, 6, null), notification }));
    t.false(await store.recordAttempt({ ...failed(d.id, c.leaseToken, 6, null), notification }));
    t.is((await store.getDelivery(d.id))?.status, 'DEAD');
    t.deepEqual(await store.listNotifications('acct_1', 10), [notification]);
    t.deepEqual(await store.listNotifications('acct_2', 10), []);
    t.deepEqual(await store.claimDue(claim(T0 + 24 * 3600_000)), []);
  });

  it('deliveries are listed per endpoint, newest first, up to the limit', async (store, t) => {
    const ds = [1, 2, 3].map((n) => ({ ...delivery('we_list', `job_${n}`), createdAt: iso(T0 + n) }));
    for (const d of ds) await store.enqueueDeliveries([d]);
    await store.enqueueDeliveries([delivery('we_elsewhere', 'job_x')]);
    t.deepEqual((await store.listDeliveries('we_list', 2)).map((d) => d.id), [ds[2].id, ds[1].id]);
  });
}

webhooksContract('sqlite', async () => {
  const db = openMemoryDb();
  return { store: createSqliteWebhooks(db), close: async () => { db.close(); } };
});

test('sqlite: two dispatchers on two connections to one file never lease the same delivery', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'webhooks-contract-'));
  const [a, b] = [openEmbeddedDb(dir), openEmbeddedDb(dir)];
  t.teardown(async () => {
    a.close();
    b.close();
    await rm(dir, { recursive: true, force: true });
  });
  const [storeA, storeB] = [createSqliteWebhooks(a), createSqliteWebhooks(b)];
  await storeA.enqueueDeliveries(Array.from({ length: 60 }, (_, i) => delivery(`we_${i % 6}`, `job_${i}`)));
  const batches = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? storeA : storeB).claimDue(claim(T0, { limit: 7 }))));
  const ids = batches.flat().map((c) => c.delivery.id);
  t.is(ids.length, 60);
  t.is(new Set(ids).size, 60);
});

const mongoUrl = process.env.MONGODB_URL;
if (mongoUrl) {
  const client = new MongoClient(mongoUrl);
  test.after.always(() => client.close());
  webhooksContract('mongo', async () => {
    const db = client.db(`contract_webhooks_${randomUUID().slice(0, 8)}`);
    return { store: await createMongoWebhooks(db), close: async () => void (await db.dropDatabase()) };
  });
} else {
  console.log('webhooks store contract: MongoDB adapter skipped, MONGODB_URL is not set');
}

test('rotatedSecrets (the one rule both adapters apply): new first, then the one that was current until its expiry, nothing older', (t) => {
  const day = 24 * 3600_000;
  const current = [
    { secret: 'whsec_b', createdAt: iso(T0), expiresAt: null },
    { secret: 'whsec_a', createdAt: iso(T0 - 1000), expiresAt: iso(T0 + day) },
  ];
  const next = { secret: 'whsec_c', createdAt: iso(T0 + 1000), expiresAt: null };
  t.deepEqual(rotatedSecrets(current, next, iso(T0 + 1000 + day), iso(T0 + 1000)), [next, { ...current[0], expiresAt: iso(T0 + 1000 + day) }]);
  // a previous secret whose grace would already be over is not kept
  t.deepEqual(rotatedSecrets(current, next, iso(T0), iso(T0 + 1000)), [next]);
});
