import test from 'ava';
import net from 'node:net';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipelineServicesOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { startChildPlatform, type ChildPlatform } from '../helpers/child-platform.ts';
import { waitFor } from '../helpers/wait.ts';
import type { AddressInfo } from 'node:net';
import { CORE_API_VERSION, definePlugin, type RouteDefinition } from '../../core/plugin.ts';
import { ServiceRegistry } from '../../core/kernel/registry.ts';
import { inMatchingOrder, wireFeatures } from '../../core/kernel/wiring.ts';
import { buildKoaApp } from '../../core/http/app.ts';
import { Drain } from '../../core/http/drain.ts';

/** Kernel v2 as a client and an operator see it: plugin rules at start-up, engines, probes per role, edge errors. */
let p: TestPlatform;
test.before(async () => {
  p = await startTestPlatform({ METRICS_TOKEN: 'metrics-token-0123456789' });
});
test.after.always(async () => {
  await p?.stop();
});

test('PLUGINS with speech but without jobs is refused at start-up, naming the missing plugin', async (t) => {
  await t.throwsAsync(startTestPlatform({ PLUGINS: 'catalog,speech' }), { message: /plugins\/speech depends on plugin "jobs", which is not loaded/ });
});

test("a plugin's own setting is validated at start-up: a bad ECHO_MAX_CHARS names the plugin and the variable", async (t) => {
  await t.throwsAsync(startTestPlatform({ PLUGINS: 'catalog,echo', ECHO_MAX_CHARS: '0' }), { message: /plugin echo: "ECHO_MAX_CHARS" must be greater than or equal to 1/ });
});

test('GET /engines lists only the features the loaded plugins serve', async (t) => {
  const features = async (plugins?: string) => {
    const platform = plugins ? await startTestPlatform({ PLUGINS: plugins }) : p;
    try {
      return [...(await (await platform.api('/engines')).json()).engines[0].features].sort();
    } finally {
      if (plugins) await platform.stop();
    }
  };
  t.deepEqual(await features(), ['clone', 'dialogue', 'dub', 'generate', 'srt', 'stream']);
  t.deepEqual(await features('catalog,speech,jobs'), ['clone', 'generate', 'stream'], 'no dialogue, dub or srt without their plugins');
  t.deepEqual(await features('catalog'), []);
});

test('/metrics on the API port needs METRICS_TOKEN as a bearer token; the ops port serves it openly', async (t) => {
  t.is((await fetch(`${p.url}/metrics`)).status, 401);
  const denied = await fetch(`${p.url}/metrics`, { headers: { authorization: 'Bearer wrong-token-0123456789' } });
  t.is(denied.status, 401);
  t.is((await denied.json()).code, 'METRICS_TOKEN_REQUIRED');
  const ok = await fetch(`${p.url}/metrics`, { headers: { authorization: 'Bearer metrics-token-0123456789' } });
  t.is(ok.status, 200);
  t.regex(await ok.text(), /tokens_charged_total/);
  t.is((await fetch(`${p.opsUrl}/metrics`)).status, 200);
  const untokened = await startTestPlatform({ PLUGINS: 'catalog' });
  try {
    const res = await fetch(`${untokened.url}/metrics`);
    t.is(res.status, 404, 'without METRICS_TOKEN the API port does not serve metrics at all');
    t.is((await res.json()).code, 'ROUTE_NOT_FOUND');
  } finally {
    await untokened.stop();
  }
});

test('a URL over 16 KB gets 431 in the native envelope with an X-Request-Id, not an empty body', async (t) => {
  const port = Number(new URL(p.url).port);
  const raw = await new Promise<string>((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(`GET /api/v1/engines?pad=${'x'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`));
    let data = '';
    socket.on('data', (d) => { data += d.toString(); });
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
  });
  t.regex(raw, /^HTTP\/1\.1 431 /);
  const [head, body] = raw.split('\r\n\r\n');
  const requestId = /X-Request-Id: (\S+)/i.exec(head)?.[1];
  t.truthy(requestId);
  t.like(JSON.parse(body), { statusCode: 431, code: 'HEADERS_TOO_LARGE', traceId: requestId });
});

test('an upload the client aborts is recorded as http_499 in usage, not as a 404', async (t) => {
  const acct = await p.bootstrap();
  const port = Number(new URL(p.url).port);
  await new Promise<void>((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(`POST /api/v1/tts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${acct.apiKey}\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"text":"xin`);
      setTimeout(() => { socket.destroy(); resolve(); }, 200);
    });
  });
  const usage = await waitFor(async () => {
    const u = await (await p.api('/usage', { key: acct.apiKey })).json();
    return u.totals.requests > 0 ? u : null;
  }, { what: 'the aborted request in usage' });
  t.like(usage.totals, { requests: 1, denied: 1, tokenCost: 0 });
  t.like(usage.byErrorCode[0], { errorCode: 'http_499', statusCode: 499 });
});

test('a client that leaves right after sending a whole POST /tts: its charge is in usage, as in the ledger', async (t) => {
  const acct = await p.bootstrap();
  const port = Number(new URL(p.url).port);
  const body = JSON.stringify({ text: 'Xin chào, khách hàng này đã rời đi trước khi nhận được câu trả lời.' });
  await new Promise<void>((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(`POST /api/v1/tts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${acct.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`, () => {
        // A reset, not a FIN: the server sees the client gone while the request is being handled.
        socket.resetAndDestroy();
        resolve();
      });
    });
  });
  const usage = await waitFor(async () => {
    const u = await (await p.api('/usage', { key: acct.apiKey })).json();
    return u.totals.requests > 0 ? u : null;
  }, { what: 'the request in usage' });
  const balance = await (await p.api('/balance', { key: acct.apiKey })).json();
  // The handler went on and accepted the job: usage says what the ledger says, and that the job was queued.
  t.true(balance.plan.usedTokens > 0);
  t.like(usage.totals, { requests: 1, queued: 1, denied: 0, tokenCost: balance.plan.usedTokens });
});

const ADMIN = 'kernel-test-admin-token-1234';
function opsUrl(child: ChildPlatform): string {
  const port = /"ops":(\d+)/.exec(child.output())?.[1];
  if (!port) throw new Error(`no ops port in the start log:\n${child.output()}`);
  return `http://127.0.0.1:${port}`;
}

test('each role run alone serves /healthz, /readyz and /metrics on its ops port, with the metrics it owns', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vieneu-roles-'));
  const children: ChildPlatform[] = [];
  try {
    const env = { DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN };
    const pipelines = await startChildPlatform({ ...env, ROLES: 'pipelines' });
    children.push(pipelines);
    const inference = await startChildPlatform({ ...env, ROLES: 'inference' });
    children.push(inference);
    t.is(pipelines.url, null, 'no API listener without the api role');
    for (const child of [pipelines, inference]) {
      const base = opsUrl(child);
      t.is((await fetch(`${base}/healthz`)).status, 200);
      const ready = await fetch(`${base}/readyz`);
      t.is(ready.status, 200, JSON.stringify(await ready.clone().json()));
    }
    const pipelineMetrics = await (await fetch(`${opsUrl(pipelines)}/metrics`)).text();
    t.regex(pipelineMetrics, /bus_consumer_lag\{topic="request\.outcomes",group="usage-aggregator"\}/);
    t.regex(pipelineMetrics, /bus_consumer_lag\{topic="ledger\.entries",group="ledger-writer"\}/);
    t.regex(pipelineMetrics, /webhook_delivery_attempts_total\{result="delivered"\} 0/);
    const inferenceMetrics = await (await fetch(`${opsUrl(inference)}/metrics`)).text();
    t.regex(inferenceMetrics, /bus_consumer_lag\{topic="tts\.jobs",group="inference"\}/);
    t.regex(inferenceMetrics, /tts_jobs_finished_total\{status="failed"\} 0/);
    const readyBody = await (await fetch(`${opsUrl(inference)}/readyz`)).json();
    t.truthy(readyBody.checks['inference:engine'], 'the inference role checks its engine');
  } finally {
    await Promise.all(children.map((c) => c.kill('SIGTERM')));
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a multipart route\'s temporary upload files are deleted by core once the handler is done, whether it answered or refused', async (t) => {
  const tmp = mkdtempSync(path.join(tmpdir(), 'vieneu-uploads-'));
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vieneu-uploads-data-'));
  // The child's temporary directory is its own, so every upload file it writes is seen here.
  const child = await startChildPlatform({ DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN, TMPDIR: tmp });
  t.teardown(async () => {
    await child.kill('SIGTERM');
    rmSync(tmp, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });
  const boot = await (await fetch(`${child.url}/admin/v1/bootstrap`, {
    method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Uploads' }),
  })).json();
  const post = async (route: string, field: string, content: string) => {
    const form = new FormData();
    form.append(field, new Blob([Buffer.from(content, 'utf8')]), 'upload.bin');
    const res = await fetch(`${child.url}/api/v1${route}`, { method: 'POST', headers: { authorization: `Bearer ${boot.apiKey}` }, body: form });
    return { status: res.status, body: await res.json() };
  };
  const leftovers = () => readdirSync(tmp, { withFileTypes: true }).filter((entry) => entry.isFile()).map((entry) => entry.name);

  t.is((await post('/srt', 'file', '1\n00:00:00,000 --> 00:00:01,500\nXin chào.\n')).status, 201);
  t.like(await post('/srt', 'file', 'not a subtitle file'), { status: 400, body: { code: 'SRT_INVALID' } });
  t.like(await post('/dub', 'audio', 'not a recording'), { status: 400 });
  t.deepEqual(leftovers(), [], 'no upload left in the temporary directory');
});

test('/readyz on the public API port names each check\'s state only; the ops port (internal) keeps the message', async (t) => {
  const down = await startTestPlatform({ REDIS_URL: 'redis://127.0.0.1:1' });
  t.teardown(() => down.stop());
  const ops = await (await fetch(`${down.opsUrl}/readyz`)).json();
  t.regex(ops.checks.counters, /^degraded, unreachable: ./, JSON.stringify(ops));
  const pub = await fetch(`${down.url}/readyz`);
  const body = await pub.json();
  t.is(pub.status, 200);
  t.is(body.status, 'degraded');
  t.is(body.checks.counters, 'degraded, unreachable', 'the state, without the error text');
  t.deepEqual(Object.keys(body.checks), Object.keys(ops.checks));
});

test('a static route wins over a parametric one that matches it, in any load order and any case or trailing slash of the request', async (t) => {
  const services = await pipelineServicesOf(p);
  const answering = (id: string, path: string) => definePlugin({
    id, version: '1.0.0', coreApi: CORE_API_VERSION, description: id, deps: {},
    register: ({ route }) => route({ method: 'POST', path, auth: 'none', name: id, body: 'none', handler: async (ctx) => { ctx.body = { by: id }; } } as RouteDefinition),
  });
  const plugins = { echo: answering('echo', '/echo/price'), things: answering('things', '/echo/:thing') };
  for (const order of [['things', 'echo'], ['echo', 'things']] as const) {
    const wired = await wireFeatures(order.map((id) => ({ folder: `plugins/${id}`, definition: plugins[id] })), new ServiceRegistry(), {});
    // As the platform builds its app (core/kernel/platform.ts).
    const app = buildKoaApp(services, { routes: inMatchingOrder(wired.routes), mounts: [], coreRouters: [], drain: new Drain() });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
      for (const path of ['/echo/price', '/Echo/price', '/echo/price/', '/ECHO/PRICE/']) {
        t.like(await (await fetch(`${base}${path}`, { method: 'POST' })).json(), { by: 'echo' }, `${order.join(' then ')}: POST ${path}`);
      }
      t.like(await (await fetch(`${base}/echo/other`, { method: 'POST' })).json(), { by: 'things' });
    } finally {
      server.close();
    }
  }
});
