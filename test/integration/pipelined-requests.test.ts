import test from 'ava';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { closeWhenConnectionDrops } from '../../core/http/queued-response.ts';
import type { TestPlatform } from '../helpers/platform.ts';
import { startSpeechPlatform } from '../helpers/speech.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * HTTP/1.1 pipelining: a client may send its next request before the answer
 * to the previous one has ended. Node queues the new response until the one
 * ahead finishes; when the connection drops meanwhile, Node 20 never closes
 * the queued one. Every request must still end: counted out of the drain,
 * its outcome recorded, its money settled.
 */

/** Writes the raw requests back to back on one connection and drops it after `dropAfterMs`. */
async function pipelineThenDrop(port: number, requests: string[], dropAfterMs: number): Promise<void> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.on('data', () => undefined);
  socket.write(requests.join(''));
  await new Promise((resolve) => setTimeout(resolve, dropAfterMs));
  socket.destroy();
}

test('responses queued behind another close when the connection drops, as the one that held the socket does, however deep the pipeline', async (t) => {
  const queued = Array.from({ length: 12 }, (_, i) => `/next${i}`);
  const closed: Record<string, boolean> = {};
  const warnings: string[] = [];
  const onWarning = (w: Error) => void warnings.push(w.message);
  process.on('warning', onWarning);
  t.teardown(() => void process.off('warning', onWarning));
  let closeListeners = 0;
  const allClosed = new Promise<void>((resolve) => {
    const server = http.createServer((req, res) => {
      closeWhenConnectionDrops(req, res);
      closeListeners = Math.max(closeListeners, req.socket.listenerCount('close'));
      res.once('close', () => {
        closed[req.url!] = res.destroyed;
        if (Object.keys(closed).length === 1 + queued.length) {
          server.close();
          resolve();
        }
      });
      // The first answer streams for a while; the others are complete at once but wait behind it.
      if (req.url === '/slow') res.write('part');
      else res.end('queued answer');
    });
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      const requests = ['/slow', ...queued].map((url) => `GET ${url} HTTP/1.1\r\nHost: x\r\n\r\n`);
      void pipelineThenDrop(port, requests, 100);
    });
  });
  const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 5_000).unref());
  t.not(await Promise.race([allClosed, timeout]), 'timeout', `closed so far: ${JSON.stringify(closed)}`);
  t.deepEqual(closed, Object.fromEntries(['/slow', ...queued].map((url) => [url, true])));
  t.true(closeListeners <= 5, `the connection carried ${closeListeners} close listeners`);
  t.deepEqual(warnings, []);
});

let p: TestPlatform;
test.before(async () => {
  p = await startSpeechPlatform();
});
test.after.always(async () => {
  await p?.stop();
});

const inFlight = async () => Number(/^http_requests_in_flight (\d+)/m.exec(await (await fetch(`${p.opsUrl}/metrics`)).text())?.[1]);

test('a POST /tts pipelined behind a speech response whose client left: both end, and usage matches the ledger', async (t) => {
  const acct = await p.bootstrap();
  const port = Number(new URL(p.url).port);
  const raw = (path: string, json: unknown) => {
    const body = JSON.stringify(json);
    return `POST /api/v1${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${acct.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  };
  await pipelineThenDrop(port, [
    raw('/audio/speech', { model: 'tts-1', input: 'Đây là một câu khá dài để bài thử có thời gian đọc. '.repeat(30), response_format: 'mp3' }),
    raw('/tts', { text: 'Việc này được gửi nối tiếp trên cùng một kết nối.' }),
  ], 400);
  const usage = await waitFor(async () => {
    const u = await (await p.api('/usage', { key: acct.apiKey })).json();
    return u.totals.requests === 2 ? u : null;
  }, { what: 'both requests in usage', timeoutMs: 20_000 });
  const balance = await (await p.api('/balance', { key: acct.apiKey })).json();
  t.true(balance.plan.usedTokens > 0);
  // The job was accepted and charged. The speech was charged if its synthesis had started when the client left,
  // and nothing if the client left before (SPEC Billing 3: no audio); either way usage says what the ledger says.
  t.is(usage.totals.tokenCost, balance.plan.usedTokens);
  const byRoute = Object.fromEntries(usage.byRoute.map((r: { route: string; requests: number; tokenCost: number; denied: number }) => [r.route, r]));
  t.like(byRoute.tts, { requests: 1 });
  t.like(byRoute.audio_speech, { requests: 1 });
  t.true(byRoute.tts.tokenCost > 0, JSON.stringify(usage.byRoute));
  t.true(byRoute.audio_speech.tokenCost > 0 || byRoute.audio_speech.denied === 1, JSON.stringify(usage.byRoute));
  t.true(await waitFor(async () => (await inFlight()) === 0, { what: 'no request left open', timeoutMs: 10_000 }));
});
