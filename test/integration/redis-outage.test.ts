import test from 'ava';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { freePort } from '../helpers/servers/java.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * A Redis outage (REDIS_URL: rate limits, idempotency keys, stream slots)
 * never stalls the API. Before, every counters command waited on ioredis'
 * reconnects (up to 15 s each), so every request hung until Redis was back.
 * Now rate limits and slots are counted by the process meanwhile, and an
 * Idempotency-Key, which no process can check alone, is a quick 503.
 */
const hasRedis = spawnSync('redis-server', ['--version']).status === 0;
const serial = hasRedis ? test.serial : test.serial.skip;
if (!hasRedis) console.log('redis-outage: skipped, redis-server is not installed');

let port = 0;
let server: ChildProcess | null = null;
let p: TestPlatform;

async function startRedis(): Promise<void> {
  server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => undefined);
  await waitFor(async () => {
    try {
      await probe.connect();
      return (await probe.ping()) === 'PONG';
    } catch {
      return false;
    }
  }, { what: 'the private redis-server to answer' });
  probe.disconnect();
}

async function stopRedis(): Promise<void> {
  if (!server || server.exitCode !== null) return;
  const exited = new Promise((resolve) => server!.once('exit', resolve));
  server.kill('SIGKILL');
  await exited;
}

test.before(async () => {
  if (!hasRedis) return;
  port = await freePort();
  await startRedis();
  p = await startTestPlatform({ REDIS_URL: `redis://127.0.0.1:${port}`, PLUGINS: 'catalog,account,speech,jobs,usage' });
});
test.after.always(async () => {
  await p?.stop();
  await stopRedis();
});

async function timed(work: () => Promise<Response>): Promise<{ res: Response; ms: number; body: any }> {
  const started = Date.now();
  const res = await work();
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // audio
  }
  return { res, ms: Date.now() - started, body };
}

serial('while Redis is down requests are answered at once: limits and stream slots counted in the process, an Idempotency-Key refused with 503; all back on Redis after', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 1_000_000 } });
  let n = 0;
  const submit = (key?: string, text = `Xin chào lần ${++n}.`) =>
    timed(() => p.api('/tts', { method: 'POST', key: acct.apiKey, json: { text }, headers: key ? { 'idempotency-key': key } : {} }));
  t.is((await submit('before-outage-1')).res.status, 201);

  await stopRedis();

  const balance = await timed(() => p.api('/balance', { key: acct.apiKey }));
  t.is(balance.res.status, 200);
  t.true(balance.ms < 1500, `GET /balance took ${balance.ms} ms`);
  const plain = await submit();
  t.is(plain.res.status, 201, JSON.stringify(plain.body));
  t.true(plain.ms < 1500, `POST /tts took ${plain.ms} ms`);
  t.truthy(plain.res.headers.get('x-ratelimit-limit'), 'the per-key limit is still counted');
  const keyed = await submit('during-outage-1');
  t.is(keyed.res.status, 503);
  t.like(keyed.body, { code: 'IDEMPOTENCY_UNAVAILABLE' });
  t.is(keyed.res.headers.get('retry-after'), '5');
  t.true(keyed.ms < 1500, `the refusal took ${keyed.ms} ms`);
  const stream = await timed(() => p.api('/tts/stream', { method: 'POST', key: acct.apiKey, json: { text: 'Luồng trong lúc mất Redis.' } }));
  t.is(stream.res.status, 200);
  t.true(stream.ms < 5000, `the stream took ${stream.ms} ms`);

  await startRedis();
  await waitFor(async () => (await submit(`after-outage-${Date.now()}`)).res.status === 201, { what: 'idempotency keys to work again' });
  const again = await submit('after-outage-fixed', 'Cùng một yêu cầu.');
  const replay = await submit('after-outage-fixed', 'Cùng một yêu cầu.');
  t.is(again.res.status, 201);
  t.is(replay.res.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(replay.body, again.body);
});
