import test from 'ava';
import { Redis } from 'ioredis';
import { freePort } from '../helpers/servers/java.ts';
import { REDIS_CLIENT_OPTIONS, reportRedisErrors } from '../../core/adapters/counters/redis.ts';

test('a Redis that cannot be reached gives one structured warning per period, not a line per reconnect attempt', async (t) => {
  const port = await freePort(); // nothing listens there
  const redis = new Redis(`redis://127.0.0.1:${port}`, { ...REDIS_CLIENT_OPTIONS, lazyConnect: true, retryStrategy: () => 10 });
  const warnings: Array<{ msg: string; fields?: Record<string, unknown> }> = [];
  let attempts = 0;
  redis.on('error', () => attempts++);
  reportRedisErrors(redis, { warn: (msg, fields) => void warnings.push({ msg, fields }), info: () => undefined }, 300);
  redis.connect().catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, 800));
  redis.disconnect();
  t.true(attempts >= 10, `ioredis tried ${attempts} times`);
  t.true(warnings.length >= 2 && warnings.length <= 4, `${warnings.length} warnings for ${attempts} errors`);
  t.is(warnings[0].msg, 'Redis unreachable; reconnecting');
  t.is(warnings[1].msg, 'Redis still unreachable; reconnecting');
  t.true(Number(warnings[1].fields?.errors) > 1, 'the later warning counts the errors since the one before');
});
