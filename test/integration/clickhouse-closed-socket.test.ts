import test from 'ava';
import { Worker } from 'node:worker_threads';
import { createClient } from '@clickhouse/client';
import type { OutcomeEvent } from '../../core/ports/analytics.ts';
import { createClickHouseAnalytics } from '../../core/adapters/analytics/clickhouse.ts';
import { sqlIdentifier } from '../../core/adapters/analytics/clickhouse-sql.ts';
import { reachable } from '../helpers/reachable.ts';

/**
 * The usage aggregator met one failed batch per bench round: `write EPIPE`
 * on an insert, ClickHouse healthy. A kept-alive socket the server had
 * closed was handed out again, because the event loop was busy when the
 * server's close arrived. This test makes that happen every time: a proxy
 * on its own thread closes each connection 100 ms after its last answer,
 * like a server's keep-alive timeout, while this thread is busy for 400 ms.
 */

const TITLE = 'a kept-alive ClickHouse socket closed by the server while the event loop was busy: the insert still lands, every row once';
const clickhouseUrl = new URL(process.env.CLICKHOUSE_URL ?? 'http://127.0.0.1:8123');
const IDLE_CLOSE_MS = 100;

/** A TCP proxy to ClickHouse on a worker thread (its timers run while this thread is busy); resolves its port. */
const PROXY = `
const net = require('node:net');
const { parentPort, workerData } = require('node:worker_threads');
const server = net.createServer((client) => {
  const upstream = net.connect(workerData.port, workerData.host);
  let idle;
  const close = () => { client.destroy(); upstream.destroy(); };
  client.on('data', (chunk) => { clearTimeout(idle); upstream.write(chunk); });
  upstream.on('data', (chunk) => { client.write(chunk); clearTimeout(idle); idle = setTimeout(close, workerData.idleCloseMs); });
  client.on('error', close); upstream.on('error', close); client.on('close', close); upstream.on('close', close);
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
parentPort.on('message', () => server.close(() => process.exit(0)));
`;

function busy(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) { /* the event loop is held, as by decoding a large batch */ }
}

function outcomes(prefix: string, n: number): OutcomeEvent[] {
  const at = new Date().toISOString();
  return Array.from({ length: n }, (_, i) => ({
    id: `${prefix}-${i}`, at, requestId: `req-${prefix}-${i}`, accountId: 'acct-closed-socket', keyId: 'key-1', grantId: 'grant-1',
    route: 'tts', status: 200, result: 'ok' as const, tokensCharged: 10, tokensRefunded: 0, characters: 10, audioSeconds: 1, genMs: 5,
    voice: 'vi-north-female-mai', voiceName: 'Mai', engine: 'v4', errorCode: null, cacheHit: false, queued: false, jobId: null,
  }));
}

if (!reachable(new URL('/ping', clickhouseUrl).href)) {
  console.log(`clickhouse-closed-socket: skipped, ClickHouse not reachable at ${clickhouseUrl.href}`);
  test.skip(TITLE, () => {});
} else {
  const database = `closed_socket_${process.pid}_${Date.now()}`;
  const user = process.env.CLICKHOUSE_USER ?? 'default';
  const password = process.env.CLICKHOUSE_PASSWORD ?? '';

  test.after.always(async () => {
    const admin = createClient({ url: clickhouseUrl.origin, username: user, password, request_timeout: 180_000 });
    await admin.command({ query: `DROP DATABASE IF EXISTS ${sqlIdentifier(database)}` });
    await admin.close();
  });

  test(TITLE, async (t) => {
    t.timeout(60_000);
    const proxy = new Worker(PROXY, { eval: true, workerData: { host: clickhouseUrl.hostname, port: Number(clickhouseUrl.port || 8123), idleCloseMs: IDLE_CLOSE_MS } });
    const port = await new Promise<number>((resolve, reject) => proxy.once('message', resolve).once('error', reject));
    const analytics = await createClickHouseAnalytics({ url: `http://127.0.0.1:${port}`, database, user, password });
    try {
      for (let round = 0; round < 3; round++) {
        await analytics.recordOutcomes(outcomes(`small-${round}`, 10));
        // The proxy closes the pool's sockets meanwhile; nothing here reads the close until the next request is on its way.
        busy(4 * IDLE_CLOSE_MS);
        await t.notThrowsAsync(analytics.recordOutcomes(outcomes(`large-${round}`, 20_000)), `round ${round}`);
      }
      const admin = createClient({ url: clickhouseUrl.origin, username: user, password });
      const [row] = await (await admin.query({
        query: `SELECT count() AS n, uniqExact(id) AS ids FROM ${sqlIdentifier(database)}.usage_events FINAL`, format: 'JSONEachRow',
      })).json<{ n: string; ids: string }>();
      await admin.close();
      t.deepEqual({ n: Number(row!.n), ids: Number(row!.ids) }, { n: 3 * 20_010, ids: 3 * 20_010 });
    } finally {
      await analytics.close();
      proxy.postMessage('stop');
    }
  });
}
