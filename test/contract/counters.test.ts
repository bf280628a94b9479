import test, { type ExecutionContext } from 'ava';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { createMemoryCounters } from '../../core/adapters/counters/memory.ts';
import { createRedisCounters, REDIS_CLIENT_OPTIONS } from '../../core/adapters/counters/redis.ts';
import type { Counters } from '../../core/ports/counters.ts';

/** The counters contract, run against every adapter. */
type Open = () => Promise<Counters>;

const REDIS_URL = 'redis://127.0.0.1:6379';

function countersContract(adapter: string, open: Open): void {
  const it = (rule: string, body: (counters: Counters, t: ExecutionContext) => Promise<void>) =>
    test(`${adapter}: ${rule}`, async (t) => {
      const counters = await open();
      t.teardown(() => counters.close());
      await body(counters, t);
    });

  it('a limit of N per window allows N requests, then refuses with remaining 0 and a reset time', async (c, t) => {
    const key = `key_${randomUUID()}`;
    const allowed = [];
    for (let i = 0; i < 3; i++) allowed.push(await c.rateLimiter.consume(key, 3, 60));
    t.deepEqual(allowed.map((d) => [d.allowed, d.limit, d.remaining]), [[true, 3, 2], [true, 3, 1], [true, 3, 0]]);
    const refused = await c.rateLimiter.consume(key, 3, 60);
    t.like(refused, { allowed: false, limit: 3, remaining: 0 });
    t.true(refused.resetMs > 0 && refused.resetMs <= 60_000);
  });

  it('keys and (limit, window) pairs are counted separately', async (c, t) => {
    const [a, b] = [`key_${randomUUID()}`, `key_${randomUUID()}`];
    t.true((await c.rateLimiter.consume(a, 1, 60)).allowed);
    t.false((await c.rateLimiter.consume(a, 1, 60)).allowed);
    t.true((await c.rateLimiter.consume(b, 1, 60)).allowed);
    t.true((await c.rateLimiter.consume(a, 2, 60)).allowed);
    t.true((await c.rateLimiter.consume(a, 1, 30)).allowed);
  });

  it('the rate window rolls over after resetMs', async (c, t) => {
    const key = `key_${randomUUID()}`;
    await c.rateLimiter.consume(key, 1, 1);
    const refused = await c.rateLimiter.consume(key, 1, 1);
    t.false(refused.allowed);
    await sleep(refused.resetMs + 50);
    t.true((await c.rateLimiter.consume(key, 1, 1)).allowed);
  });

  it('with blockSeconds, the request past the limit blocks the key for that long from then, not for the rest of the window', async (c, t) => {
    const key = `key_${randomUUID()}`;
    t.true((await c.rateLimiter.consume(key, 2, 3600, 1)).allowed);
    t.true((await c.rateLimiter.consume(key, 2, 3600, 1)).allowed);
    const blocked = await c.rateLimiter.consume(key, 2, 3600, 1);
    t.false(blocked.allowed);
    t.true(blocked.resetMs > 0 && blocked.resetMs <= 1000, `blocked for ${blocked.resetMs} ms`);
    t.true((await c.rateLimiter.consume(key, 2, 3600)).allowed, 'the same key without a block is its own count');
    await sleep(blocked.resetMs + 50);
    t.true((await c.rateLimiter.consume(key, 2, 3600, 1)).allowed, 'the block ends and the count starts again');
  });

  it('concurrent requests never get more than the limit', async (c, t) => {
    const key = `key_${randomUUID()}`;
    const decisions = await Promise.all(Array.from({ length: 50 }, () => c.rateLimiter.consume(key, 20, 60)));
    t.is(decisions.filter((d) => d.allowed).length, 20);
  });

  it('idempotency: the first begin reserves the key, later ones see it in flight since when it began', async (c, t) => {
    const key = `idem_${randomUUID()}`;
    const before = Date.now();
    t.is(await c.idempotency.begin(key, 'fp1', 60), null);
    const seen = await c.idempotency.begin(key, 'fp2', 60);
    t.like(seen, { state: 'in_flight', fingerprint: 'fp1' });
    const startedAt = seen?.state === 'in_flight' ? seen.startedAt ?? 0 : 0;
    t.true(startedAt >= before && startedAt <= Date.now(), 'the reservation says when its request began');
    const racers = await Promise.all(Array.from({ length: 10 }, () => c.idempotency.begin(`${key}:race`, 'fp', 60)));
    t.is(racers.filter((r) => r === null).length, 1);
  });

  it('idempotency: complete keeps the reply for retries', async (c, t) => {
    const key = `idem_${randomUUID()}`;
    await c.idempotency.begin(key, 'fp', 60);
    const done = { state: 'done' as const, fingerprint: 'fp', status: 202, body: { id: 'job_1', text: 'xin chào' }, headers: { 'x-request-id': 'r1' } };
    await c.idempotency.complete(key, done, 60);
    t.deepEqual(await c.idempotency.begin(key, 'fp', 60), done);
  });

  it('idempotency: abandon drops only an in-flight reservation', async (c, t) => {
    const [pending, finished] = [`idem_${randomUUID()}`, `idem_${randomUUID()}`];
    await c.idempotency.begin(pending, 'fp', 60);
    await c.idempotency.abandon(pending);
    t.is(await c.idempotency.begin(pending, 'fp', 60), null);
    await c.idempotency.begin(finished, 'fp', 60);
    await c.idempotency.complete(finished, { state: 'done', fingerprint: 'fp', status: 200, body: null }, 60);
    await c.idempotency.abandon(finished);
    t.like(await c.idempotency.begin(finished, 'fp', 60), { state: 'done', status: 200 });
    await t.notThrowsAsync(c.idempotency.abandon(`idem_${randomUUID()}`));
  });

  it('idempotency: records expire after their ttl', async (c, t) => {
    const [pending, finished] = [`idem_${randomUUID()}`, `idem_${randomUUID()}`];
    await c.idempotency.begin(pending, 'fp', 1);
    await c.idempotency.complete(finished, { state: 'done', fingerprint: 'fp', status: 200, body: 'ok' }, 1);
    await sleep(1100);
    t.is(await c.idempotency.begin(pending, 'fp', 60), null);
    t.is(await c.idempotency.begin(finished, 'fp', 60), null);
  });

  it('slots: acquire up to max, then refuse; release frees one', async (c, t) => {
    const key = `grant_${randomUUID()}`;
    const first = await c.slots.acquire(key, 2, 60);
    const second = await c.slots.acquire(key, 2, 60);
    t.like(first, { ok: true, inUse: 1 });
    t.like(second, { ok: true, inUse: 2 });
    t.not(first.slotId, second.slotId);
    t.deepEqual(await c.slots.acquire(key, 2, 60), { ok: false, slotId: null, inUse: 2 });
    await c.slots.release(key, first.slotId!);
    t.is(await c.slots.inUse(key), 1);
    t.like(await c.slots.acquire(key, 2, 60), { ok: true, inUse: 2 });
    await c.slots.release(key, 'slot_unknown');
    t.is(await c.slots.inUse(key), 2);
  });

  it('slots: a slot that is never released expires after its ttl', async (c, t) => {
    const key = `grant_${randomUUID()}`;
    await c.slots.acquire(key, 1, 1);
    t.false((await c.slots.acquire(key, 1, 1)).ok);
    await sleep(1100);
    t.is(await c.slots.inUse(key), 0);
    t.true((await c.slots.acquire(key, 1, 60)).ok);
  });

  it('slots: concurrent acquires never exceed max', async (c, t) => {
    const key = `grant_${randomUUID()}`;
    const results = await Promise.all(Array.from({ length: 20 }, () => c.slots.acquire(key, 4, 60)));
    t.is(results.filter((r) => r.ok).length, 4);
    t.is(await c.slots.inUse(key), 4);
    await t.notThrowsAsync(c.ping());
  });
}

countersContract('memory', async () => createMemoryCounters());

/**
 * ava wants every test declared synchronously, so reachability is probed
 * with a blocking child process: connect, PING, expect +PONG.
 */
function redisAnswers(url: string): boolean {
  const { hostname, port } = new URL(url);
  const probe = `const s = require('node:net').connect(${Number(port) || 6379}, ${JSON.stringify(hostname)});
    s.setTimeout(1000, () => process.exit(1));
    s.on('error', () => process.exit(1));
    s.on('connect', () => s.write('PING\\r\\n'));
    s.on('data', (d) => process.exit(String(d).startsWith('+PONG') ? 0 : 1));`;
  return spawnSync(process.execPath, ['-e', probe], { timeout: 3000 }).status === 0;
}

/** Removes the keys a test wrote, then hands the client to close() with the adapter. */
async function dropPrefix(redis: Redis, prefix: string): Promise<void> {
  for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 200 })) {
    if ((keys as string[]).length > 0) await redis.del(...(keys as string[]));
  }
}

if (redisAnswers(REDIS_URL)) {
  countersContract('redis', async () => {
    // The platform's own client options (auto-pipelining included).
    const redis = new Redis(REDIS_URL, REDIS_CLIENT_OPTIONS);
    const prefix = `contract:${randomUUID()}:`;
    const counters = createRedisCounters(redis, prefix);
    return {
      ...counters,
      async close() {
        await dropPrefix(redis, prefix);
        await counters.close();
      },
    };
  });
} else {
  console.log(`counters contract: Redis adapter skipped, nothing answers at ${REDIS_URL}`);
}
