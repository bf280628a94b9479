/**
 * Webhook dispatch benchmark: `npx tsx test/bench/webhook-dispatch.ts [deliveries]`.
 *
 * Job events go through the real consumer (fan-out into the SQLite store on
 * a temp file) and the real dispatcher (claims, signing, HTTPS with the test
 * CA, records) to a local HTTPS receiver in this process, which answers 204.
 * The producer keeps a bounded backlog, like a live stream of job events.
 * Prints throughput per 10,000 deliveries (median and the whole run) and
 * heap/RSS after a forced GC at each step; exits 1 when the dispatcher is
 * below 500 deliveries/s or the heap grows more than 16 MB after warm-up.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { openEmbeddedDb } from '../../core/adapters/embedded-db.ts';
import { createSqliteWebhooks } from '../../core/adapters/webhooks/sqlite.ts';
import { createDownloadLinks } from '../../core/downloads.ts';
import { createLogger } from '../../core/logger.ts';
import type { Metrics } from '../../core/metrics.ts';
import { TOPICS } from '../../core/ports/bus.ts';
import { startWebhookDispatcher } from '../../pipelines/webhook-dispatcher/dispatcher.ts';
import { FakeBus, completedEvent } from '../helpers/webhook-harness.ts';
import { makeTestPki, startReceiver } from '../helpers/webhook-receiver.ts';

v8.setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const TOTAL = Number(process.argv[2] ?? 100_000);
const STEP = 10_000;
const ENDPOINTS = 8;
const BACKLOG = 2_000;
const MAX_PER_ENDPOINT = 8;
const CONCURRENCY = 64;
const MIN_RATE = 500;
const MAX_HEAP_GROWTH_MB = 16;

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const pki = makeTestPki();
  const dir = mkdtempSync(path.join(tmpdir(), 'webhook-bench-'));
  const db = openEmbeddedDb(dir, 'bench.db');
  const store = createSqliteWebhooks(db);
  const receiver = await startReceiver(pki.trusted);
  // Only counts are kept: a receiver that stored every request would be the leak.
  receiver.received = { push: () => 0 } as unknown as typeof receiver.received;
  const perEndpoint = new Map<string, number>();
  let maxPerEndpointSeen = 0;
  receiver.respond = (request, res) => {
    const n = (perEndpoint.get(request.path) ?? 0) + 1;
    perEndpoint.set(request.path, n);
    maxPerEndpointSeen = Math.max(maxPerEndpointSeen, n);
    res.once('close', () => void perEndpoint.set(request.path, perEndpoint.get(request.path)! - 1));
    res.writeHead(204).end();
  };

  for (let i = 0; i < ENDPOINTS; i++) {
    await store.createEndpoint({
      id: `we_bench_${i}`, accountId: `acct_bench_${i}`, url: receiver.url(`/hooks/${i}`), description: null, apiKeyId: null,
      events: ['tts.job.completed', 'tts.job.failed'], status: 'ENABLED',
      secrets: [{ secret: `whsec_bench_secret_${i}`, createdAt: new Date().toISOString(), expiresAt: null }], secretPrefix: 'whsec_benc', createdAt: new Date().toISOString(),
    });
  }

  let delivered = 0;
  let failed = 0;
  const counter = { inc: (labels: { result: string }) => void (labels.result === 'delivered' ? delivered++ : failed++) };
  const bus = new FakeBus();
  const dispatcher = await startWebhookDispatcher(
    {
      store, bus,
      blobs: { exists: async () => true },
      downloads: createDownloadLinks('bench-signing-secret-0123456789', 'https://api.vieneu.test'),
      logger: createLogger('warn'),
      metrics: { webhookDeliveries: counter, webhookDeliveriesDead: { inc: () => undefined } } as unknown as Pick<Metrics, 'webhookDeliveries' | 'webhookDeliveriesDead'>,
      config: { allowLoopback: true, caFile: pki.caFile, retryScale: 1 },
    },
    { concurrency: CONCURRENCY, maxPerEndpoint: MAX_PER_ENDPOINT, pollIntervalMs: 50 },
  );

  let published = 0;
  const producer = (async () => {
    while (published < TOTAL) {
      if (published - (delivered + failed) >= BACKLOG) {
        await new Promise((r) => setTimeout(r, 5));
        continue;
      }
      const event = completedEvent({ accountId: `acct_bench_${published % ENDPOINTS}`, jobId: `job_bench_${published}` });
      await bus.publish(TOPICS.jobEvents, event.eventId, event);
      published++;
    }
  })();

  console.log(`webhook dispatch: ${TOTAL} deliveries to ${ENDPOINTS} endpoints on one local HTTPS receiver; concurrency ${CONCURRENCY}, at most ${MAX_PER_ENDPOINT} per endpoint; SQLite store ${path.join(dir, 'bench.db')}`);
  console.log('deliveries   rate/s   heapUsed MB   rss MB');
  const rates: number[] = [];
  const heaps: number[] = [];
  const started = performance.now();
  let stepStarted = started;
  for (let mark = STEP; mark <= TOTAL; mark += STEP) {
    while (delivered + failed < mark) await new Promise((r) => setTimeout(r, 10));
    const now = performance.now();
    rates.push((STEP * 1000) / (now - stepStarted));
    stepStarted = now;
    gc();
    const mem = process.memoryUsage();
    heaps.push(mem.heapUsed);
    console.log(`${String(mark).padStart(10)}   ${rates.at(-1)!.toFixed(0).padStart(6)}   ${mb(mem.heapUsed).padStart(11)}   ${mb(mem.rss).padStart(6)}`);
  }
  const seconds = (performance.now() - started) / 1000;
  await producer;
  await dispatcher.stop();
  await receiver.close();

  const stored = db.prepare("SELECT status, COUNT(*) AS n FROM webhook_deliveries GROUP BY status").all() as Array<{ status: string; n: number }>;
  db.close();
  rmSync(dir, { recursive: true, force: true });
  pki.cleanup();

  const overall = TOTAL / seconds;
  // The first step includes start-up allocations (TLS sessions, prepared statements); growth is measured after it.
  const warmIndex = heaps.length > 2 ? 1 : 0;
  const warm = heaps[warmIndex];
  const growth = heaps.at(-1)! - warm;
  const perEndpointOk = maxPerEndpointSeen <= MAX_PER_ENDPOINT;
  console.log(`\nwhole run: ${TOTAL} in ${seconds.toFixed(1)} s = ${overall.toFixed(0)} deliveries/s; median of ${rates.length} windows ${median(rates).toFixed(0)}/s (min ${Math.min(...rates).toFixed(0)}, max ${Math.max(...rates).toFixed(0)})`);
  console.log(`failed attempts: ${failed}; stored: ${stored.map((s) => `${s.status}=${s.n}`).join(', ')}`);
  console.log(`heap after GC: ${mb(warm)} MB at ${STEP * (warmIndex + 1)} -> ${mb(heaps.at(-1)!)} MB at ${TOTAL} (growth ${mb(growth)} MB, ${((growth / warm) * 100).toFixed(1)}%)`);
  console.log(`receiver saw at most ${maxPerEndpointSeen} requests at once for one endpoint (limit ${MAX_PER_ENDPOINT}) and ${receiver.maxInFlight} in all (limit ${CONCURRENCY})`);
  const pass = median(rates) >= MIN_RATE && growth < MAX_HEAP_GROWTH_MB * 1024 * 1024 && failed === 0 && perEndpointOk;
  console.log(pass ? 'PASS' : `FAIL (needs >= ${MIN_RATE}/s median, < ${MAX_HEAP_GROWTH_MB} MB heap growth, no failures, per-endpoint bound kept)`);
  process.exitCode = pass ? 0 : 1;
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
