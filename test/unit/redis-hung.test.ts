import test from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort } from '../helpers/servers/java.ts';
import { waitFor } from '../helpers/wait.ts';
import { createRedisCounters, REDIS_CLIENT_OPTIONS } from '../../core/adapters/counters/redis.ts';

/**
 * README "When Redis is down": nothing waits on it. A Redis that keeps its
 * connection open but stops answering (a paused process) is the case a
 * refused connection does not cover.
 */
const hasRedis = spawnSync('redis-server', ['--version']).status === 0;
if (!hasRedis) console.log('redis-hung: skipped, no redis-server on this machine (.ci/run installs it)');

(hasRedis ? test : test.skip)('a Redis that stops answering on an open connection is dropped within seconds, and the counters then fail over at once', async (t) => {
  const port = await freePort();
  const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  t.teardown(() => { server.kill('SIGCONT'); server.kill('SIGKILL'); });
  const redis = new Redis(`redis://127.0.0.1:${port}`, { ...REDIS_CLIENT_OPTIONS, retryStrategy: () => 100 });
  await waitFor(async () => (redis.status === 'ready' ? true : null), { timeoutMs: 10_000, what: 'redis ready' });
  const counters = createRedisCounters(redis, 'hung:', { warn: () => {} });
  t.teardown(() => counters.close().catch(() => undefined));
  t.is(await counters.idempotency.begin('k1', 'f', 60), null, 'answers while Redis does');

  server.kill('SIGSTOP');
  // The watchdog asks every second and gives up on a PING after the 1 s command timeout.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const began = Date.now();
  await t.throwsAsync(counters.idempotency.begin('k2', 'f', 60));
  const slot = await counters.slots.acquire('s', 2, 60);
  const limited = await counters.rateLimiter.consume('rl', 10, 60);
  t.true(Date.now() - began < 300, `three operations took ${Date.now() - began} ms while Redis hung (each waited its 1 s timeout before)`);
  t.true(slot.ok, 'a slot from the process\'s own pool');
  t.true(limited.allowed, 'the rate limit counted in the process');

  server.kill('SIGCONT');
  await waitFor(async () => (redis.status === 'ready' ? true : null), { timeoutMs: 15_000, what: 'redis ready again' });
  t.is(await counters.idempotency.begin('k3', 'f', 60), null, 'back on Redis once it answers');
});
