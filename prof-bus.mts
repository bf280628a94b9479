import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openEmbeddedDb } from './core/adapters/embedded-db.ts';
import { createLocalBus } from './core/adapters/bus/local.ts';
import { TOPICS } from './core/ports/bus.ts';
const N = 300_000;
const dir = mkdtempSync(path.join(tmpdir(), 'busprof-'));
const db = openEmbeddedDb(dir, 'b.db');
const bus = createLocalBus(db, { retainPerPartition: N + 1 });
const ev = (i: number) => ({ id: `out_bench_${i}`, at: new Date().toISOString(), requestId: `req_bench_${i}`, accountId: `acct_${(i*7919)%1000}`, keyId: `k_${i%3}`, grantId: 'g', route: 'tts', status: 200, result: 'ok', tokensCharged: 195, tokensRefunded: 0, characters: 50, audioSeconds: 2.5, genMs: 80 + i%300, voice: 'vi-central-male-hung', voiceName: 'Hùng', engine: 'v4', errorCode: null, cacheHit: false, queued: false, jobId: null });
for (let f = 0; f < N; f += 10000) await bus.publish(TOPICS.outcomes, Array.from({length: 10000}, (_, k) => { const e = ev(f+k); return { id: e.id, key: e.accountId, value: e }; }));
for (const maxBatch of [5000, 20000, 50000]) {
  const group = 'g' + maxBatch;
  let n = 0; const t = performance.now(); let cpu0 = process.cpuUsage();
  await new Promise<void>(async (resolve) => {
    const sub = await bus.subscribeBatch({ topic: TOPICS.outcomes, group, maxBatch, maxWaitMs: 250, handler: async (ms) => { n += ms.length; if (n >= N) { setTimeout(async () => { await sub.stop(); resolve(); }, 0); } } });
  });
  const s = (performance.now() - t) / 1000; const cpu = process.cpuUsage(cpu0);
  console.log(`bus only, maxBatch ${maxBatch}: ${(N/s).toFixed(0)} msg/s wall, cpu ${((cpu.user+cpu.system)/1e6).toFixed(2)} s`);
}
await bus.close(); db.close(); rmSync(dir, { recursive: true, force: true });
