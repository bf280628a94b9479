/**
 * Issue 9: synthesis concurrency on `POST /audio/speech` and
 * `POST /agent/speech` is bounded per key, per account and for the process,
 * so one key's connections that never read cannot take the server's memory
 * and engines from everyone else. Small limits, set through configuration.
 */
import test from 'ava';
import net from 'node:net';
import { readdirSync, readFileSync } from 'node:fs';
import type { TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait.ts';
import { longText, priceOf, remainingTokens, startSpeechPlatform } from '../helpers/speech.ts';

const PER_KEY = 2;
const PER_ACCOUNT = 3;
const PROCESS = 5;
const QUEUE_MS = 300;
/** Minutes of audio: a client that does not read holds its stream open. */
const LONG = longText(400);

let p: TestPlatform;
test.before(async () => {
  p = await startSpeechPlatform({
    SPEECH_CONCURRENCY_PER_KEY: String(PER_KEY), SPEECH_CONCURRENCY_PER_ACCOUNT: String(PER_ACCOUNT),
    SPEECH_CONCURRENCY: String(PROCESS), SPEECH_QUEUE_MS: String(QUEUE_MS), RATE_SPEECH_PER_MINUTE: '100000',
  });
});
test.after.always(async () => {
  await p?.stop();
});

interface RawReply {
  status: number;
  headers: Record<string, string>;
  /** the body bytes read along with the head (all of it for a refusal) */
  body: string;
  socket: net.Socket;
}

/**
 * Sends a request on a raw socket and reads only the response head (plus a
 * refusal's small body), then stops reading: the socket stays open with
 * nothing taken from it, as a stuck client's would.
 */
function rawPost(path: string, key: string, json: unknown): Promise<RawReply> {
  const url = new URL(p.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    const payload = Buffer.from(JSON.stringify(json));
    socket.write(`POST /api/v1${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${payload.length}\r\n\r\n`);
    socket.write(payload);
    let received = '';
    const onData = (d: Buffer) => {
      received += d.toString('latin1');
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [statusLine, ...lines] = received.slice(0, end).split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      const status = Number(statusLine.split(' ')[1]);
      const length = Number(headers['content-length'] ?? NaN);
      if (status !== 200 && received.length - end - 4 < length) return;
      socket.off('data', onData);
      socket.pause();
      resolve({ status, headers, body: received.slice(end + 4), socket });
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
}

/** espeak-ng processes started by this test process. */
function espeakChildren(): number {
  return readdirSync('/proc').filter((d) => /^\d+$/.test(d)).filter((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return /\(espeak-ng\)/.test(stat) && Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === process.pid;
    } catch {
      return false;
    }
  }).length;
}

const speechBody = { input: LONG, voice: 'vi-north-female-mai', response_format: 'pcm', stream_format: 'audio', sample_rate: 48000 };

test.serial('many non-reading connections of one key: the key runs at most its share, the rest wait briefly then get an application 429; other accounts are served promptly; memory stays bounded', async (t) => {
  const flooder = await p.bootstrap();
  const other = await p.bootstrap();
  const before = await remainingTokens(p, flooder.apiKey);
  // One long request first: the text-preparation threads and the engine start once per process, not per connection.
  await (await p.api('/audio/speech', { method: 'POST', key: other.apiKey, json: { ...speechBody, stream_format: undefined } })).arrayBuffer();
  const rssBefore = process.memoryUsage().rss;

  const CONNECTIONS = 40;
  const replies = await Promise.all(Array.from({ length: CONNECTIONS }, () => rawPost('/audio/speech', flooder.apiKey, speechBody)));
  try {
    const admitted = replies.filter((r) => r.status === 200);
    const refused = replies.filter((r) => r.status === 429);
    t.is(admitted.length, PER_KEY, 'only the key\'s share runs');
    t.is(refused.length, CONNECTIONS - PER_KEY);
    // SPEC tell-apart rules: an application 429 carries X-RateLimit-* and Retry-After, in the route's envelope.
    const r = refused[0];
    t.is(r.headers['x-ratelimit-limit'], String(PER_KEY));
    t.is(r.headers['x-ratelimit-remaining'], '0');
    t.truthy(r.headers['x-ratelimit-reset']);
    t.is(r.headers['retry-after'], '1');
    t.regex(r.headers['content-type'], /application\/json/);
    const body = JSON.parse(r.body) as { error: { type: string; code: null; message: string } };
    t.is(body.error.type, 'rate_limit_exceeded');
    t.regex(body.error.message, /at once/);
    t.is(before - (await remainingTokens(p, flooder.apiKey)), PER_KEY * priceOf(LONG), 'refusals were charged nothing');
    t.true(espeakChildren() <= PROCESS, `${espeakChildren()} espeak-ng processes`);

    // Another account: its balance and its speech answer promptly while the flood holds its slots.
    let started = performance.now();
    const balance = await p.api('/balance', { key: other.apiKey });
    t.is(balance.status, 200);
    await balance.arrayBuffer();
    t.true(performance.now() - started < 1000, `balance took ${(performance.now() - started).toFixed(0)} ms`);
    started = performance.now();
    const speech = await p.api('/audio/speech', { method: 'POST', key: other.apiKey, json: { input: 'Xin chào, tôi vẫn được phục vụ ngay.', voice: 'vi-north-female-mai', response_format: 'pcm' } });
    t.is(speech.status, 200);
    t.true((await speech.arrayBuffer()).byteLength > 10_000);
    t.true(performance.now() - started < 3000, `speech took ${(performance.now() - started).toFixed(0)} ms`);

    // The two stuck streams do not keep producing audio into memory (back-pressure reaches the engine).
    await new Promise((r) => setTimeout(r, 1500));
    const grownMb = (process.memoryUsage().rss - rssBefore) / 1024 / 1024;
    t.true(grownMb < 60, `RSS grew ${grownMb.toFixed(1)} MB`);
  } finally {
    for (const r of replies) r.socket.destroy();
  }

  // Closing the stuck connections frees the key's slots.
  const again = await waitFor(async () => {
    const res = await p.api('/audio/speech', { method: 'POST', key: flooder.apiKey, json: { input: 'Lại được rồi.', voice: 'vi-north-female-mai', response_format: 'pcm' } });
    if (res.status === 200) return res;
    await res.arrayBuffer();
    return null;
  }, { what: 'the key\'s slots to be released', timeoutMs: 5000 });
  t.is(again!.status, 200);
  await again!.arrayBuffer();
});

test.serial('a request that waits in the queue is served when a slot frees within the wait', async (t) => {
  const { apiKey } = await p.bootstrap();
  const held = await Promise.all([1, 2].map(() => rawPost('/audio/speech', apiKey, speechBody)));
  t.deepEqual(held.map((r) => r.status), [200, 200]);
  const waiting = p.api('/audio/speech', { method: 'POST', key: apiKey, json: { input: 'Tôi chờ một chút.', voice: 'vi-north-female-mai', response_format: 'pcm' } });
  await new Promise((r) => setTimeout(r, QUEUE_MS / 3));
  held[0].socket.destroy();
  const res = await waiting;
  t.is(res.status, 200);
  await res.arrayBuffer();
  held[1].socket.destroy();
});

test.serial('the account bound spans its keys; the process bound answers 503 in the route\'s JSON envelope', async (t) => {
  const { accountId, grantId, apiKey } = await p.bootstrap();
  const second = (await (await p.admin(`/accounts/${accountId}/keys`, { method: 'POST', json: { grantId } })).json()) as { apiKey: string };
  const held: RawReply[] = [];
  try {
    held.push(...(await Promise.all([apiKey, apiKey, second.apiKey].map((k) => rawPost('/audio/speech', k, speechBody)))));
    t.deepEqual(held.map((r) => r.status), [200, 200, 200]);
    const overAccount = await rawPost('/audio/speech', second.apiKey, speechBody);
    held.push(overAccount);
    t.is(overAccount.status, 429);
    t.is(overAccount.headers['x-ratelimit-limit'], String(PER_ACCOUNT));

    // Two more accounts fill the process (5 slots), then a sixth request finds no room: 503.
    const a = await p.bootstrap();
    const b = await p.bootstrap();
    const c = await p.bootstrap();
    const cBefore = await remainingTokens(p, c.apiKey);
    held.push(...(await Promise.all([a, b].map((acc) => rawPost('/audio/speech', acc.apiKey, speechBody)))));
    t.deepEqual(held.slice(-2).map((r) => r.status), [200, 200]);
    const compat = await rawPost('/audio/speech', c.apiKey, speechBody);
    held.push(compat);
    t.is(compat.status, 503);
    t.is(compat.headers['retry-after'], '1');
    t.regex(compat.headers['content-type'], /application\/json/, 'the service\'s own 503 is JSON, unlike the edge\'s HTML');
    t.is((JSON.parse(compat.body) as { error: { type: string } }).error.type, 'api_error');
    const native = await rawPost('/agent/speech?voiceId=vi-north-female-mai', c.apiKey, { message: { type: 'voice-request', text: 'Xin chào.', sampleRate: 16000 } });
    held.push(native);
    t.is(native.status, 503);
    const body = JSON.parse(native.body) as { statusCode: number; code: string };
    t.is(body.statusCode, 503);
    t.is(body.code, 'SPEECH_BUSY');
    t.is(await remainingTokens(p, c.apiKey), cBefore, 'nothing charged');
  } finally {
    for (const r of held) r.socket.destroy();
  }
});

test.serial('a client that leaves while it waits for a synthesis slot is charged nothing when the slot comes free (SPEC Billing 3: no audio)', async (t) => {
  const acct = await p.bootstrap();
  const before = await remainingTokens(p, acct.apiKey);
  const held = await Promise.all(Array.from({ length: PER_KEY }, () => rawPost('/audio/speech', acct.apiKey, speechBody)));
  t.deepEqual(held.map((r) => r.status), [200, 200]);
  // The third waits in the queue for the key's slot; its client gives up, then a slot frees within the queue time.
  const url = new URL(p.url);
  const waiting = net.connect(Number(url.port), url.hostname);
  waiting.on('error', () => undefined);
  const payload = Buffer.from(JSON.stringify({ input: 'Xin chào các bạn', voice: 'vi-north-female-mai', response_format: 'pcm' }));
  waiting.write(`POST /api/v1/audio/speech HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${acct.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${payload.length}\r\n\r\n`);
  waiting.write(payload);
  await new Promise((r) => setTimeout(r, 100));
  waiting.destroy();
  await new Promise((r) => setTimeout(r, 50));
  held[0]!.socket.destroy();
  await new Promise((r) => setTimeout(r, QUEUE_MS + 700));
  held[1]!.socket.destroy();
  // The held streams were cut by their clients mid-audio: charged (SPEC). The one that left while queued: not.
  t.is(before - (await remainingTokens(p, acct.apiKey)), PER_KEY * priceOf(LONG));
});
