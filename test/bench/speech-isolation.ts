/**
 * One request never stalls the others: `npx tsx test/bench/speech-isolation.ts`.
 *
 * Starts the real server (`core/main.ts`, all three roles, embedded
 * defaults) in its own process and probes `GET /healthz` back to back, first
 * idle, then while four worst-case requests run at once, in three rounds of
 * different pathological 50,000-character texts:
 * - `POST /tts` with a funded key (accepted, then rendered by the in-process
 *   inference worker), and with a key whose grant has 0 tokens;
 * - `POST /audio/speech` (PCM streamed; the client reads for the rest of the
 *   round, then disconnects) with a funded key, and with the 0-token key.
 * Each round lasts until every answer has arrived and at least 6 seconds.
 * Prints p50 / p99 / max of the probes and exits 1 when any probe under load
 * took 100 ms or more. The machine's load average is printed with them: on a
 * shared 2-core machine other processes' CPU shows up as probe latency too.
 * BENCH_DEBUG=1 prints every probe over 50 ms with its time in the round;
 * BENCH_ROLES=api leaves queued jobs unrendered (an API-only process).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnServer } from './lib.ts';

const ADMIN = 'bench-admin-token-0123456789';
const LIMIT_MS = 100;
const ROUND_MS = 6_000;
const IDLE_MS = 2_000;

const TEXTS: Array<{ name: string; text: string; aiRefine: boolean }> = [
  { name: '50,000 digits', text: '9'.repeat(50_000), aiRefine: false },
  { name: 'mixed figures and spaces', text: '12.345,6 %  $9 1/1/2020 '.repeat(2_100).slice(0, 50_000), aiRefine: false },
  { name: 'formulas with aiRefine', text: 'a≤b+c '.repeat(8_334).slice(0, 50_000), aiRefine: true },
];

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
};

/** Probes /healthz one request after another until `until` resolves; returns each probe's latency in ms. */
async function probe(base: string, until: Promise<unknown>): Promise<number[]> {
  let done = false;
  void until.finally(() => (done = true));
  const latencies: number[] = [];
  const probeStart = performance.now();
  while (!done) {
    const t = performance.now();
    const res = await fetch(`${base}/healthz`);
    await res.arrayBuffer();
    latencies.push(performance.now() - t);
    if (process.env.BENCH_DEBUG && performance.now() - t > 50) console.log(`   slow probe at +${((t - probeStart) / 1000).toFixed(2)} s: ${(performance.now() - t).toFixed(0)} ms`);
    if (res.status !== 200) throw new Error(`/healthz answered ${res.status}`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return latencies;
}

const summary = (xs: number[]) => `${xs.length} probes, p50 ${percentile(xs, 50).toFixed(1)} ms, p99 ${percentile(xs, 99).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms`;

const dataDir = mkdtempSync(path.join(tmpdir(), 'vieneu-isolation-'));
const server = await spawnServer('core/main.ts', {
  DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ADMIN_TOKEN: ADMIN, ROLES: process.env.BENCH_ROLES ?? 'api,pipelines,inference',
  // One load generator is one source address: the per-address edge limits would measure themselves.
  EDGE_REQUESTS_PER_MINUTE: '0', EDGE_CONNECTIONS: '0', EDGE_STREAM_REQUESTS_PER_MINUTE: '0', EDGE_STREAM_CONNECTIONS: '0',
});
const api = `${server.url}/api/v1`;

async function bootstrap(tokens: number): Promise<string> {
  const res = await fetch(`${server.url}/admin/v1/bootstrap`, {
    method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `bench ${tokens}`, grant: { totalTokens: tokens } }),
  });
  return ((await res.json()) as { apiKey: string }).apiKey;
}

const post = (route: string, key: string, body: unknown, signal?: AbortSignal) =>
  fetch(`${api}${route}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body), signal });

/** Streams the audio until the round ends, then disconnects; resolves with status and bytes read. */
async function streamFor(res: Response, ms: number): Promise<string> {
  let bytes = 0;
  const reader = res.body?.getReader();
  const stop = Date.now() + ms;
  while (reader && Date.now() < stop) {
    const next = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), Math.max(1, stop - Date.now())))]);
    if (next === null || next.done) break;
    bytes += next.value.length;
  }
  await reader?.cancel().catch(() => undefined);
  return `${res.status}, ${(bytes / 1024).toFixed(0)} KiB audio read`;
}

let failed = false;
try {
  const funded = await bootstrap(2_000_000_000);
  const broke = await bootstrap(0);
  await probe(server.url, new Promise((r) => setTimeout(r, 500))); // warm the probe connection
  const idle = await probe(server.url, new Promise((r) => setTimeout(r, IDLE_MS)));
  console.log(`idle:                         ${summary(idle)}`);

  const loaded: number[] = [];
  for (const { name, text, aiRefine } of TEXTS) {
    const abort = new AbortController();
    const started = performance.now();
    const requests = Promise.all([
      post('/tts', funded, { text, aiRefine }).then(async (r) => `${r.status} ${((await r.json()) as { status?: string }).status ?? ''}`),
      post('/tts', broke, { text, aiRefine }).then(async (r) => `${r.status} ${((await r.json()) as { code?: string }).code ?? ''}`),
      post('/audio/speech', funded, { input: text, aiRefine, response_format: 'pcm', stream_format: 'audio' }, abort.signal)
        .then((r) => streamFor(r, ROUND_MS)),
      post('/audio/speech', broke, { input: text, aiRefine, response_format: 'pcm' }).then(async (r) => `${r.status} ${((await r.json()) as { error?: { type?: string } }).error?.type ?? ''}`),
    ]);
    const round = Promise.all([requests, new Promise((r) => setTimeout(r, ROUND_MS))]);
    const latencies = await probe(server.url, round);
    const [outcomes] = await round;
    abort.abort();
    loaded.push(...latencies);
    console.log(`${name.padEnd(30)}${summary(latencies)} over ${((performance.now() - started) / 1000).toFixed(1)} s`);
    console.log(`  answers: /tts funded ${outcomes[0]}; /tts 0-token ${outcomes[1]}; /audio/speech funded ${outcomes[2]}; /audio/speech 0-token ${outcomes[3]}`);
  }
  const worst = Math.max(...loaded);
  console.log(`\nunder load: ${summary(loaded)}; idle p50 ${percentile(idle, 50).toFixed(1)} ms, idle max ${Math.max(...idle).toFixed(1)} ms; machine load average ${loadavg()[0].toFixed(1)}`);
  console.log(`GET /healthz max under load ${worst.toFixed(1)} ms (target < ${LIMIT_MS} ms) ${worst < LIMIT_MS ? 'PASS' : 'MISS'}`);
  failed = worst >= LIMIT_MS;
} finally {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
