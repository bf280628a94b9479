import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnServer, load, median, fmt, type LoadResult } from './lib.ts';

/**
 * Issue 2: authenticated, rate-limited GET /api/v1/balance on embedded defaults
 * vs a bare Koa app answering a constant JSON body (100 connections); target
 * ratio >= 0.40. Issue 4: POST /tts accept path with unique texts at 50
 * connections; target >= 0.40 of what GET /balance reaches in the same run.
 * Each figure is the median of three 8-second runs; servers run in their own
 * processes so the load generator does not share their event loop.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ADMIN = 'bench-admin-token-0123456789';

function summarise(label: string, runs: LoadResult[]): LoadResult {
  const r = { rps: median(runs.map((x) => x.rps)), p50: median(runs.map((x) => x.p50)), p99: median(runs.map((x) => x.p99)), non2xx: runs.reduce((s, x) => s + x.non2xx, 0), errors: runs.reduce((s, x) => s + x.errors, 0) };
  console.log(`${label.padEnd(28)} ${fmt(r)}   (runs: ${runs.map((x) => x.rps.toFixed(0)).join(', ')})`);
  return r;
}

const dataDir = mkdtempSync(path.join(tmpdir(), 'vieneu-bench-'));
const bare = await spawnServer('test/bench/bare-koa.ts');
const platform = await spawnServer('core/main.ts', {
  DATA_DIR: dataDir, PORT: '0', OPS_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ADMIN_TOKEN: ADMIN, ROLES: process.env.BENCH_ROLES ?? 'api',
  ACCOUNT_ROUTES_PER_MINUTE: '100000000', RATE_SPEECH_PER_MINUTE: '100000000', QUEUE_MAX_DEPTH: '100000000', USER_QUEUE_MAX: '100000000',
});
try {
  const boot = await fetch(`${platform.url}/admin/v1/bootstrap`, {
    method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench', grant: { totalTokens: 2_000_000_000 } }),
  });
  const { apiKey } = (await boot.json()) as { apiKey: string };
  const auth = { authorization: `Bearer ${apiKey}` };

  // warm-up
  await load({ url: `${bare.url}/`, connections: 100, duration: 2 });
  await load({ url: `${platform.url}/api/v1/balance`, connections: 100, duration: 2, headers: auth });

  const bareRuns: LoadResult[] = [];
  const balanceRuns: LoadResult[] = [];
  const ttsRuns: LoadResult[] = [];
  let seq = 0;
  for (let i = 0; i < ROUNDS; i++) {
    bareRuns.push(await load({ url: `${bare.url}/`, connections: 100 }));
    balanceRuns.push(await load({ url: `${platform.url}/api/v1/balance`, connections: 100, headers: auth }));
    ttsRuns.push(await load({
      url: `${platform.url}/api/v1/tts`, connections: 50, method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify({ text: `Xin chào, đây là yêu cầu số ${++seq} của bài kiểm tra hiệu năng.` }) }) }],
    }));
  }
  console.log(`\nAPI throughput, ${ROUNDS} rounds of 8 s each (median), embedded defaults`);
  const b = summarise('bare Koa constant JSON', bareRuns);
  const bal = summarise('GET /api/v1/balance', balanceRuns);
  const tts = summarise('POST /api/v1/tts (accept)', ttsRuns);
  console.log(`\nbalance / bare Koa = ${(bal.rps / b.rps).toFixed(2)}  (target >= 0.40) ${bal.rps / b.rps >= 0.4 ? 'PASS' : 'MISS'}`);
  console.log(`tts accept / balance = ${(tts.rps / bal.rps).toFixed(2)}  (target >= 0.40) ${tts.rps / bal.rps >= 0.4 ? 'PASS' : 'MISS'}`);
  process.exitCode = bal.rps / b.rps >= 0.4 && tts.rps / bal.rps >= 0.4 ? 0 : 1;
} finally {
  await Promise.all([bare.stop(), platform.stop()]);
  rmSync(dataDir, { recursive: true, force: true });
}
