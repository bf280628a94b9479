import test, { type ExecutionContext } from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startChildPlatform, type ChildPlatform } from '../helpers/child-platform.ts';
import { FrameReader } from '../helpers/frames.ts';
import { waitFor } from '../helpers/wait.ts';
import { makeTestPki, startReceiver, type Receiver, type TestPki } from '../helpers/webhook-receiver.ts';

/**
 * SIGTERM as Kubernetes sends it, to the real process (`core/main.ts`), in
 * the middle of work: readiness goes false at once, in-flight work settles
 * within SHUTDOWN_TIMEOUT_SECONDS, the process exits 0, and after a restart
 * on the same data the ledger is exact, outcome events are all there and
 * jobs complete once.
 */
const ADMIN = 'shutdown-test-admin-token-1234';
const children: ChildPlatform[] = [];
const dirs: string[] = [];
let pki: TestPki;
let receiver: Receiver;

test.before(async () => {
  pki = makeTestPki();
  receiver = await startReceiver(pki.trusted);
});
test.after.always(async () => {
  await Promise.all(children.map((c) => c.kill()));
  await receiver?.close();
  pki?.cleanup();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'vieneu-shutdown-'));
  dirs.push(dir);
  return dir;
}

async function start(dir: string, env: Record<string, string> = {}): Promise<ChildPlatform> {
  const child = await startChildPlatform({
    DATA_DIR: dir, ADMIN_TOKEN: ADMIN, URL_SIGNING_SECRET: 'shutdown-test-signing-secret', SHUTDOWN_TIMEOUT_SECONDS: '4',
    WEBHOOK_ALLOW_LOOPBACK: '1', WEBHOOK_CA_FILE: pki.caFile, ...env,
  });
  children.push(child);
  return child;
}

function client(base: string) {
  const admin = async (p: string, init: RequestInit = {}) =>
    (await fetch(`${base}/admin/v1${p}`, { ...init, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' } })).json();
  const api = (key: string, p: string, init: RequestInit = {}) =>
    fetch(`${base}/api/v1${p}`, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(init.headers as Record<string, string>) } });
  return { admin, api };
}

/**
 * Restarted on the same files: the cut stream's charge and its refund are both
 * in the ledger, the grant is whole, and usage shows the one request as an
 * error (synthesis_unavailable: the shutdown cut it).
 */
async function cutStreamSettledAfterRestart(t: ExecutionContext, dir: string, acct: { grantId: string; apiKey: string }): Promise<void> {
  const second = await start(dir);
  const after = client(second.url!);
  const reconcile = await waitFor(async () => {
    const r = await after.admin(`/grants/${acct.grantId}/reconcile`);
    return r.ledgerCharged > 0 && r.ledgerRefunded > 0 ? r : null;
  }, { timeoutMs: 20_000, what: 'the charge and its refund in the ledger' });
  t.is(reconcile.usedTokens, 0, 'a cut stream is refunded in full');
  t.is(reconcile.ledgerCharged, reconcile.ledgerRefunded);
  t.true(reconcile.balanced);
  const usage = await waitFor(async () => {
    const u = await (await after.api(acct.apiKey, '/usage')).json();
    return u.totals.requests === 1 ? u : null;
  }, { timeoutMs: 20_000, what: 'the outcome event in usage' });
  t.like(usage.totals, { requests: 1, error: 1 });
  t.like(usage.byErrorCode[0], { errorCode: 'synthesis_unavailable' });
  await second.kill('SIGTERM');
}

const longText = (sentences: number) =>
  Array.from({ length: sentences }, (_, i) => `Đây là câu thứ ${i + 1} của một văn bản dài, đọc chậm rãi để kiểm tra việc dừng máy chủ.`).join(' ');

/** Sends SIGTERM and resolves with the exit code and how long the process took to leave. */
async function terminate(child: ChildPlatform): Promise<{ code: number | string; ms: number }> {
  const started = Date.now();
  child.child.kill('SIGTERM');
  const code = await child.exited;
  return { code, ms: Date.now() - started };
}

test('SIGTERM during a /tts/stream: readiness false at once, the cut stream is refunded, its outcome published, exit 0 within the timeout', async (t) => {
  const dir = dataDir();
  const first = await start(dir, { STREAM_HEARTBEAT_SECONDS: '0.5' });
  const { admin, api } = client(first.url!);
  const acct = await admin('/bootstrap', { method: 'POST', body: JSON.stringify({ name: 'Shutdown', grant: { totalTokens: 2_000_000 } }) });

  const res = await api(acct.apiKey, '/tts/stream', { method: 'POST', body: JSON.stringify({ text: longText(300), outputFormat: 'pcm', sampleRate: 8000 }) });
  t.is(res.status, 200);
  const reader = new FrameReader();
  const body = res.body!.getReader();
  let frames = 0;
  while (frames < 1) {
    const { value, done } = await body.read();
    if (done) break;
    frames += reader.push(value).filter((e) => e.kind === 'audio').length;
  }
  t.true(frames >= 1, 'audio is flowing when the signal arrives');

  const leaving = terminate(first);
  // Readiness turns false at once, while the stream is still being served.
  const ready = await fetch(`${first.url}/readyz`).catch(() => null);
  if (ready) t.is(ready.status, 503);
  for (;;) {
    const { value, done } = await body.read().catch(() => ({ value: undefined, done: true as const }));
    if (done) break;
    reader.push(value!);
  }
  const { code, ms } = await leaving;
  t.is(code, 0, first.output().slice(-2000));
  t.true(ms < 4000 + 2000, `left after ${ms} ms`);
  t.false(reader.terminated, 'the stream ended without its zero-length marker: cut short');
  // Settled, so the exit is 0; the last line says the deadline ended a response.
  t.regex(first.output(), /"msg":"stopped".*"clean":true,"responsesEnded":1/);

  await cutStreamSettledAfterRestart(t, dir, acct);
});

/**
 * A `POST /tts/stream` read by a slow client: 512 bytes every 100 ms, far below what the engine sends, so the
 * server holds a backlog the client never takes. Resolves once the response began; `closed` when the connection
 * went and everything received was read (`hurry` reads the rest at once).
 */
function slowStream(base: string, key: string, body: unknown): Promise<{ status: number; reader: FrameReader; closed: Promise<void>; hurry(): void }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}/api/v1/tts/stream`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } }, (res) => {
      const reader = new FrameReader();
      res.pause();
      const trickle = setInterval(() => {
        const chunk = res.read(512) as Buffer | null;
        if (chunk) reader.push(chunk);
      }, 100);
      const closed = new Promise<void>((done) => res.once('close', () => {
        clearInterval(trickle);
        done();
      }));
      res.on('error', () => {});
      const hurry = () => {
        clearInterval(trickle);
        res.on('data', (chunk: Buffer) => reader.push(chunk));
        res.resume();
      };
      resolve({ status: res.statusCode!, reader, closed, hurry });
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

test('SIGTERM with a slow-reading /tts/stream client: the deadline cuts the stream and closes its connection, it is refunded, and the exit is 0', async (t) => {
  const dir = dataDir();
  const first = await start(dir, { SHUTDOWN_TIMEOUT_SECONDS: '6', STREAM_HEARTBEAT_SECONDS: '0.5' });
  const { admin } = client(first.url!);
  const acct = await admin('/bootstrap', { method: 'POST', body: JSON.stringify({ name: 'Slow reader', grant: { totalTokens: 2_000_000 } }) });
  const stream = await slowStream(first.url!, acct.apiKey, { text: longText(300), outputFormat: 'pcm', sampleRate: 8000 });
  t.is(stream.status, 200);
  // Long enough for the engine to run far ahead of the reader.
  await new Promise((r) => setTimeout(r, 1500));

  const { code, ms } = await terminate(first);
  stream.hurry();
  await stream.closed;
  t.is(code, 0, first.output().slice(-3000));
  t.true(ms < 6000 + 2000, `left after ${ms} ms`);
  t.false(stream.reader.terminated, 'the stream ended without its zero-length marker: cut short');
  t.regex(first.output(), /"msg":"stopped".*"clean":true,"responsesEnded":1/);

  await cutStreamSettledAfterRestart(t, dir, acct);
});

test('a response still not done at the deadline (its request body never finished arriving) exits 1, and the stopped line says why', async (t) => {
  const dir = dataDir();
  const first = await start(dir, { SHUTDOWN_TIMEOUT_SECONDS: '2' });
  const { admin } = client(first.url!);
  const acct = await admin('/bootstrap', { method: 'POST', body: JSON.stringify({ name: 'Stalled upload' }) });
  // A request whose body stops half-way: its handler has not answered, so the deadline cannot end it.
  const { port } = new URL(first.url!);
  const socket = net.connect(Number(port), '127.0.0.1');
  socket.on('error', () => {});
  t.teardown(() => socket.destroy());
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.write(`POST /api/v1/tts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${acct.apiKey}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"text":"`);
  await new Promise((r) => setTimeout(r, 300));

  const { code } = await terminate(first);
  t.is(code, 1, first.output().slice(-2000));
  t.regex(first.output(), /"msg":"stopped","clean":false,"responsesEnded":1,"ms":\d+,"notClean":"at the deadline: 1 response still open"/);
});

test('SIGTERM during a job render: the job is handed back or finished, and after a restart it completed once, charged once', async (t) => {
  const dir = dataDir();
  const first = await start(dir, { SHUTDOWN_TIMEOUT_SECONDS: '3', JOB_LEASE_SECONDS: '2' });
  const { admin, api } = client(first.url!);
  const acct = await admin('/bootstrap', { method: 'POST', body: JSON.stringify({ name: 'Render', grant: { totalTokens: 2_000_000 } }) });
  const text = longText(200);
  const submit = await api(acct.apiKey, '/tts', { method: 'POST', body: JSON.stringify({ text }) });
  t.is(submit.status, 201);
  const { jobId } = await submit.json();
  await waitFor(async () => (await (await api(acct.apiKey, `/tts/${jobId}`)).json()).status === 'processing', { timeoutMs: 20_000, intervalMs: 10, what: 'rendering to start' });

  const { code, ms } = await terminate(first);
  t.is(code, 0, first.output().slice(-2000));
  t.true(ms < 3000 + 2000, `left after ${ms} ms`);

  const second = await start(dir);
  const after = client(second.url!);
  const done = await waitFor(async () => {
    const job = await (await after.api(acct.apiKey, `/tts/${jobId}`)).json();
    return job.status === 'completed' || job.status === 'failed' ? job : null;
  }, { timeoutMs: 90_000, intervalMs: 200, what: 'the job to finish after the restart' });
  t.is(done.status, 'completed');
  const reconcile = await waitFor(async () => {
    const r = await after.admin(`/grants/${acct.grantId}/reconcile`);
    return r.ledgerCharged > 0 ? r : null;
  }, { what: 'the charge in the ledger' });
  const price = Math.ceil(Math.round([...text.normalize('NFC')].length * 3 * 1.3 * 1e6) / 1e6);
  t.is(reconcile.usedTokens, price, 'charged exactly once');
  t.is(reconcile.ledgerRefunded, 0);
  t.true(reconcile.balanced);
  const usage = await waitFor(async () => {
    const u = await (await after.api(acct.apiKey, '/usage')).json();
    return u.totals.ok === 1 ? u : null;
  }, { timeoutMs: 20_000, what: 'the job closing its usage row once' });
  t.like(usage.totals, { requests: 1, ok: 1, queued: 0 });
  await second.kill('SIGTERM');
});

test('SIGTERM during a webhook delivery: the attempt in flight finishes, the delivery is recorded once, nothing is sent again after a restart', async (t) => {
  const dir = dataDir();
  const first = await start(dir);
  const { admin, api } = client(first.url!);
  const acct = await admin('/bootstrap', { method: 'POST', body: JSON.stringify({ name: 'Hooks' }) });
  let answered = 0;
  receiver.respond = (request, res) => {
    if (request.path !== '/slow') return void res.writeHead(204).end();
    // Slow enough for the signal to arrive mid-delivery, quick enough for the drain.
    setTimeout(() => { answered++; res.writeHead(204).end(); }, 1500);
  };
  const endpoint = await (await api(acct.apiKey, '/webhooks', { method: 'POST', body: JSON.stringify({ url: receiver.url('/slow') }) })).json();
  const submit = await api(acct.apiKey, '/tts', { method: 'POST', body: JSON.stringify({ text: 'Báo cho tôi khi xong nhé, cảm ơn bạn rất nhiều.' }) });
  t.is(submit.status, 201);
  await waitFor(() => receiver.received.some((r) => r.path === '/slow'), { timeoutMs: 30_000, intervalMs: 10, what: 'the delivery to start' });

  const { code } = await terminate(first);
  t.is(code, 0, first.output().slice(-2000));
  t.is(answered, 1, 'the receiver answered the attempt in flight before the process left');

  const second = await start(dir);
  const after = client(second.url!);
  const deliveries = await waitFor(async () => {
    const list = await (await after.api(acct.apiKey, `/webhooks/${endpoint.id}/deliveries`)).json();
    return list[0]?.status === 'DELIVERED' ? list : null;
  }, { what: 'the DELIVERED record' });
  t.is(deliveries.length, 1);
  t.like(deliveries[0], { attempts: 1, lastStatusCode: 204 });
  await new Promise((r) => setTimeout(r, 1500));
  t.is(receiver.received.filter((r) => r.path === '/slow').length, 1, 'delivered once');
  await second.kill('SIGTERM');
});
