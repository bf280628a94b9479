import test from 'ava';
import { startTestPlatform } from '../helpers/platform.ts';

/**
 * A process that stops while Redis cannot be reached lets go: the counters'
 * client is dropped, not sent QUIT, which it would keep reconnecting to
 * deliver (a shutdown that never let the process exit, a test worker that
 * hung CI). Alone in its file, so no other test's timers are counted.
 */
test('stopping the platform while Redis cannot be reached leaves no timer or socket behind', async (t) => {
  const before = new Set(process.getActiveResourcesInfo());
  const down = await startTestPlatform({ REDIS_URL: 'redis://127.0.0.1:1' });
  const { apiKey } = await down.bootstrap();
  t.is((await down.api('/balance', { key: apiKey })).status, 200);
  t.is((await fetch(`${down.platform.opsUrl}/readyz`)).status, 200);
  await down.stop();
  // ioredis ends a dropped connection on a 2-second timer.
  await new Promise((resolve) => setTimeout(resolve, 2500));
  const left = process.getActiveResourcesInfo().filter((r) => (r === 'Timeout' || r.startsWith('TCP')) && !before.has(r));
  t.deepEqual(left, []);
});
