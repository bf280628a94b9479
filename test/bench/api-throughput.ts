import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LOAD_GENERATOR_ENV, spawnServer, load, median, fmt, type LoadResult } from './lib.ts';

/**
 * Issue 2: authenticated, rate-limited GET /api/v1/balance on embedded defaults
 * vs a bare Koa app answering a constant JSON body (100 connections); target
 * ratio >= 0.50 (issue 17). Issues 4 and 10: POST /tts accept path with unique texts at
 * 50 connections; target >= 0.40 of what GET /balance reaches in the same run.
 * Each figure is the median of three 8-second runs after a warm-up of each
 * route; servers run in their own processes so the load generator does not
 * share their event loop. The platform runs on whatever MONGODB_URL and
 * KAFKA_BROKERS the environment names (embedded defaults when unset), and
 * on Linux the server's CPU time per request is printed beside each figure:
 * on a shared machine the rates follow what else runs, the CPU cost less so.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ADMIN = 'bench-admin-token-0123456789';

type Measured = LoadResult & { cpuUsPerRequest: number | null };

function summarise(label: string, runs: Measured[]): LoadResult {
  const r = { rps: median(runs.map((x) => x.rps)), p50: median(runs.map((x) => x.p50)), p99: median(runs.map((x) => x.p99)), non2xx: runs.reduce((s, x) => s + x.non2xx, 0), errors: runs.reduce((s, x) => s + x.errors, 0) };
  const cpu = runs.every((x) => x.cpuUsPerRequest !== null) ? `, server CPU ${median(runs.map((x) => x.cpuUsPerRequest!)).toFixed(0)} µs/req` : '';
  console.log(`${label.padEnd(28)} ${fmt(r)}${cpu}   (runs: ${runs.map((x) => x.rps.toFixed(0)).join(', ')})`);
  return r;
}

/** CPU time (user + system) a process has used, in µs; null where /proc is not there. */
function cpuMicros(pid: number | undefined): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return null;
  }
}

async function measure(pid: number | undefined, options: Parameters<typeof load>[0]): Promise<Measured> {
  const before = cpuMicros(pid);
  const result = await load(options);
  const after = cpuMicros(pid);
  const requests = result.rps * Number(options.duration ?? 8);
  return { ...result, cpuUsPerRequest: before === null || after === null || requests === 0 ? null : (after - before) / requests };
}

const stack = [process.env.MONGODB_URL ? 'MongoDB' : null, process.env.KAFKA_BROKERS ? 'Kafka' : null].filter(Boolean).join(' + ') || 'embedded defaults';

const dataDir = mkdtempSync(path.join(tmpdir(), 'vieneu-bench-'));
const bare = await spawnServer('test/bench/bare-koa.ts');
// A platform that cannot start (a stale build, a port) must not leave the bare server running behind the bench.
const platform = await spawnServer('core/main.ts', {
  DATA_DIR: dataDir, PORT: '0', OPS_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ADMIN_TOKEN: ADMIN, ROLES: process.env.BENCH_ROLES ?? 'api',
  ...LOAD_GENERATOR_ENV,
  // BENCH_EDGE_OFF=1 turns the edge phase off, to compare its cost.
  ...(process.env.BENCH_EDGE_OFF === '1' ? { EDGE_REQUESTS_PER_MINUTE: '0', EDGE_CONNECTIONS: '0' } : {}),
}).catch(async (err: unknown) => {
  await bare.stop();
  rmSync(dataDir, { recursive: true, force: true });
  throw err;
});
try {
  const boot = await fetch(`${platform.url}/admin/v1/bootstrap`, {
    method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench', grant: { totalTokens: 2_000_000_000 } }),
  });
  const { apiKey } = (await boot.json()) as { apiKey: string };
  const auth = { authorization: `Bearer ${apiKey}` };

  let seq = 0;
  const tts = (duration?: number): Parameters<typeof load>[0] => ({
    url: `${platform.url}/api/v1/tts`, connections: 50, method: 'POST', ...(duration ? { duration } : {}),
    headers: { ...auth, 'content-type': 'application/json' },
    requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify({ text: `Xin chào, đây là yêu cầu số ${++seq} của bài kiểm tra hiệu năng.` }) }) }],
  });
  // warm-up of each route
  await load({ url: `${bare.url}/`, connections: 100, duration: 2 });
  await load({ url: `${platform.url}/api/v1/balance`, connections: 100, duration: 2, headers: auth });
  await load(tts(2));

  const bareRuns: Measured[] = [];
  const balanceRuns: Measured[] = [];
  const ttsRuns: Measured[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    bareRuns.push(await measure(bare.child.pid, { url: `${bare.url}/`, connections: 100 }));
    balanceRuns.push(await measure(platform.child.pid, { url: `${platform.url}/api/v1/balance`, connections: 100, headers: auth }));
    ttsRuns.push(await measure(platform.child.pid, tts()));
  }
  console.log(`\nAPI throughput, ${ROUNDS} rounds of 8 s each (median), ${stack}`);
  const b = summarise('bare Koa constant JSON', bareRuns);
  const bal = summarise('GET /api/v1/balance', balanceRuns);
  const accept = summarise('POST /api/v1/tts (accept)', ttsRuns);
  console.log(`\nbalance / bare Koa = ${(bal.rps / b.rps).toFixed(2)}  (target >= 0.50) ${bal.rps / b.rps >= 0.5 ? 'PASS' : 'MISS'}`);
  console.log(`tts accept / balance = ${(accept.rps / bal.rps).toFixed(2)}  (target >= 0.40) ${accept.rps / bal.rps >= 0.4 ? 'PASS' : 'MISS'}`);
  process.exitCode = bal.rps / b.rps >= 0.5 && accept.rps / bal.rps >= 0.4 ? 0 : 1;
} finally {
  await Promise.all([bare.stop(), platform.stop()]);
  rmSync(dataDir, { recursive: true, force: true });
}
