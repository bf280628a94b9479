/**
 * What happens when the engine is slow, dies mid-stream, hangs, produces
 * nothing, or the client walks away. The engine port of the running
 * platform is wrapped per test, so every test here runs serially.
 */
import test from 'ava';
import { EngineUnavailableError } from '../../core/ports/engine.ts';
import type { TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait.ts';
import { readFrameStream } from '../helpers/frames.ts';
import { failAfter, sleep, slowBy, stallAfter, tapEngine, type Behaviour, type EngineTap } from '../helpers/engine-tap.ts';
import { SENTENCE, longText, priceOf, remainingTokens, startSpeechPlatform } from '../helpers/speech.ts';
import { coreServices } from '../../core/services.ts';
import type { SpeechEngine } from '../../core/ports/engine.ts';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const HEARTBEAT_S = 0.2;
const ABANDON_S = 1.5;

let p: TestPlatform;
let tap: EngineTap | null = null;
let engine: SpeechEngine;
test.before(async () => {
  p = await startSpeechPlatform({ STREAM_HEARTBEAT_SECONDS: String(HEARTBEAT_S), STREAM_ABANDON_SECONDS: String(ABANDON_S) });
  engine = await p.platform.service(coreServices.engine);
});
test.afterEach.always(() => {
  tap?.restore();
  tap = null;
});
test.after.always(async () => {
  await p?.stop();
});

function useEngine(behaviour?: Behaviour): EngineTap {
  tap = tapEngine(engine, behaviour);
  return tap;
}

async function account() {
  const { apiKey } = await p.bootstrap();
  return { apiKey, before: await remainingTokens(p, apiKey) };
}

const post = (path: string, json: unknown, apiKey: string, signal?: AbortSignal) => p.api(path, { method: 'POST', key: apiKey, json, signal });

/** Reads a body to its end; a connection cut mid-body is reported, not thrown. */
async function readAll(res: Response): Promise<{ bytes: Buffer; cut: boolean }> {
  const parts: Buffer[] = [];
  try {
    for await (const part of res.body as unknown as AsyncIterable<Uint8Array>) parts.push(Buffer.from(part));
    return { bytes: Buffer.concat(parts), cut: false };
  } catch {
    return { bytes: Buffer.concat(parts), cut: true };
  }
}

/** The request's outcome event has been published: its billing is final. */
async function settled(apiKey: string, requests = 1) {
  return waitFor(async () => {
    const usage = await (await p.api('/usage', { key: apiKey })).json();
    return usage.totals?.requests >= requests ? usage : null;
  }, { what: 'the outcome event' });
}

test.serial('heartbeats: 44-byte empty WAVs while nothing new is synthesised, at most X-Stream-Heartbeat apart, skipped by the parser', async (t) => {
  useEngine(slowBy(700));
  const { apiKey, before } = await account();
  const res = await post('/tts/stream', { text: SENTENCE }, apiKey);
  t.is(res.headers.get('x-stream-heartbeat'), String(HEARTBEAT_S));
  const arrivals: number[] = [];
  // Server and client share this process: any gap beyond the rule is the machine stalling the event loop, which is measured, not assumed.
  const stalls = monitorEventLoopDelay({ resolution: 10 });
  stalls.enable();
  const parsed = await readFrameStream(res.body!, () => { arrivals.push(performance.now()); });
  stalls.disable();
  t.true(parsed.terminated);
  t.true(parsed.frames.length >= 2);
  t.true(parsed.heartbeats >= 4, `${parsed.heartbeats} heartbeats`);
  const gaps = arrivals.slice(1).map((at, i) => (at - arrivals[i]) / 1000);
  const stall = stalls.max / 1e9;
  t.true(Math.max(...gaps) <= HEARTBEAT_S + stall + 0.1, `longest gap ${Math.max(...gaps)} s, longest event-loop stall ${stall} s`);
  t.is(before - (await remainingTokens(p, apiKey)), priceOf(SENTENCE), 'a stream with audio frames and the marker is billed');
});

test.serial('audio is streamed as it is generated on all three routes', async (t) => {
  useEngine(slowBy(400));
  const { apiKey } = await account();
  const requests: Array<[string, unknown]> = [
    ['/tts/stream', { text: SENTENCE, outputFormat: 'pcm' }],
    ['/audio/speech', { input: SENTENCE, response_format: 'pcm', stream_format: 'audio' }],
    ['/agent/speech', { message: { type: 'voice-request', text: SENTENCE, sampleRate: 16000 } }],
  ];
  for (const [path, json] of requests) {
    const res = await post(path, json, apiKey);
    const arrivals: number[] = [];
    for await (const _ of res.body as unknown as AsyncIterable<Uint8Array>) arrivals.push(performance.now());
    t.true(arrivals.at(-1)! - arrivals[0] >= 300, `${path}: first bytes came ${arrivals.at(-1)! - arrivals[0]} ms before the end`);
  }
});

test.serial('/tts/stream cut short by a worker dying: frames without the terminator, refunded', async (t) => {
  useEngine(failAfter(1));
  const { apiKey, before } = await account();
  const res = await post('/tts/stream', { text: SENTENCE }, apiKey);
  t.is(res.status, 200);
  const parsed = await readFrameStream(res.body!);
  t.is(parsed.frames.length, 1);
  t.false(parsed.terminated);
  t.is(await remainingTokens(p, apiKey), before);
  const usage = await settled(apiKey);
  t.like(usage.totals, { error: 1, ok: 0 });
});

test.serial('/tts/stream carrying only heartbeats then the marker is refunded', async (t) => {
  useEngine(async function* (request) {
    await sleep(600, request.signal);
  });
  const { apiKey, before } = await account();
  const res = await post('/tts/stream', { text: SENTENCE }, apiKey);
  const parsed = await readFrameStream(res.body!);
  t.true(parsed.terminated);
  t.is(parsed.frames.length, 0);
  t.true(parsed.heartbeats >= 1);
  t.is(await remainingTokens(p, apiKey), before);
});

test.serial('/tts/stream without audio for streamAbandonSeconds is abandoned: ends without the marker, refunded, engine stopped', async (t) => {
  const engine = useEngine(stallAfter(1));
  const { apiKey, before } = await account();
  const started = performance.now();
  const res = await post('/tts/stream', { text: SENTENCE }, apiKey);
  const parsed = await readFrameStream(res.body!);
  const seconds = (performance.now() - started) / 1000;
  t.is(parsed.frames.length, 1);
  t.false(parsed.terminated);
  t.true(parsed.heartbeats >= 3, 'heartbeats kept coming while the worker was silent');
  t.true(seconds >= ABANDON_S && seconds < ABANDON_S + 3, `${seconds} s`);
  t.true(engine.requests[0].signal!.aborted);
  t.is(await remainingTokens(p, apiKey), before);
});

test.serial('/tts/stream: every worker failing before any audio is 502, refunded; no worker at all is 503', async (t) => {
  useEngine(failAfter(0));
  const { apiKey, before } = await account();
  const res = await post('/tts/stream', { text: SENTENCE }, apiKey);
  t.is(res.status, 502);
  const body = await res.json();
  t.is(body.statusCode, 502);
  t.regex(body.message, /refunded/);
  t.is(await remainingTokens(p, apiKey), before);
  tap!.restore();
  useEngine(async function* () {
    throw new EngineUnavailableError('inference service unreachable');
  });
  const unavailable = await post('/tts/stream', { text: SENTENCE }, apiKey);
  t.is(unavailable.status, 503);
  await unavailable.arrayBuffer();
  t.is(await remainingTokens(p, apiKey), before);
  const usage = await settled(apiKey, 2);
  t.is(usage.totals.error, 2);
  t.is(usage.totals.tokenCost, 2 * priceOf(SENTENCE), 'charged before the work, then refunded');
});

test.serial('/audio/speech: failure before any audio is 500 api_error, refunded', async (t) => {
  useEngine(failAfter(0));
  const { apiKey, before } = await account();
  const res = await post('/audio/speech', { input: SENTENCE }, apiKey);
  t.is(res.status, 500);
  t.like((await res.json()).error, { type: 'api_error', code: null });
  t.is(await remainingTokens(p, apiKey), before);
});

test.serial('/audio/speech cut short: a streamed transfer is cut; a whole WAV, not yet sent, answers 500; both refunded, the saved copy failed', async (t) => {
  useEngine(failAfter(1));
  const { apiKey, before } = await account();
  const streamed = await post('/audio/speech', { input: SENTENCE, response_format: 'pcm', stream_format: 'audio' }, apiKey);
  t.is(streamed.status, 200);
  t.true((await readAll(streamed)).cut);
  const whole = await post('/audio/speech', { input: SENTENCE, response_format: 'wav' }, apiKey);
  const jobId = whole.headers.get('x-service-job-id');
  t.is(whole.status, 500);
  t.is(whole.statusText, 'Internal Server Error', 'not "500 OK"');
  t.like((await whole.json()).error, { type: 'api_error', code: null });
  t.is(await remainingTokens(p, apiKey), before);
  const job = await waitFor(async () => {
    const body = await (await p.api(`/tts/${jobId}`, { key: apiKey })).json();
    return body.status === 'failed' ? body : null;
  }, { what: 'the saved copy to fail' });
  t.is(job.audioUrl, undefined);
});

test.serial('/audio/speech mp3 and opus failing before the encoder sent a byte: a proper 500 api_error (refunded), not a connection closed without a status', async (t) => {
  useEngine(failAfter(1));
  const { apiKey, before } = await account();
  for (const format of ['mp3', 'opus'] as const) {
    const res = await post('/audio/speech', { input: SENTENCE, response_format: format }, apiKey);
    t.is(res.status, 500, format);
    t.is(res.headers.get('content-type'), 'application/json; charset=utf-8', format);
    t.like((await res.json()).error, { type: 'api_error', code: null }, format);
  }
  t.is(await remainingTokens(p, apiKey), before);
});

test.serial('/audio/speech sse cut short: speech.audio.error ends the stream, no speech.audio.done, refunded', async (t) => {
  useEngine(failAfter(1));
  const { apiKey, before } = await account();
  const res = await post('/audio/speech', { input: SENTENCE, response_format: 'pcm', stream_format: 'sse' }, apiKey);
  const types = (await res.text()).split('\n\n').filter(Boolean).map((block) => JSON.parse(block.slice(6)).type);
  t.is(types[0], 'speech.audio.delta');
  t.is(types.at(-1), 'speech.audio.error');
  t.false(types.includes('speech.audio.done'));
  t.is(await remainingTokens(p, apiKey), before);
});

for (const [path, json] of [
  ['/tts/stream', { text: longText(150) }],
  ['/audio/speech', { input: longText(150), response_format: 'pcm', stream_format: 'audio' }],
  ['/agent/speech', { message: { type: 'voice-request', text: longText(150), sampleRate: 24000 } }],
] as const) {
  test.serial(`${path}: a client that disconnects mid-stream is charged and the engine sees the abort at once`, async (t) => {
    const engine = useEngine();
    const { apiKey, before } = await account();
    const client = new AbortController();
    const res = await post(path, json, apiKey, client.signal);
    t.is(res.status, 200);
    const reader = res.body!.getReader();
    t.false((await reader.read()).done);
    client.abort();
    const abortedAt = await waitFor(() => (engine.requests[0].signal!.aborted ? performance.now() : 0), { timeoutMs: 2000, what: 'the engine to see the abort' });
    t.truthy(abortedAt);
    const usage = await settled(apiKey);
    t.is(usage.totals.ok, 1);
    const text = 'text' in json ? json.text : 'input' in json ? json.input : json.message.text;
    t.is(before - (await remainingTokens(p, apiKey)), priceOf(text), 'still charged');
  });
}

test.serial('/agent/speech: no audio from the worker is 502 with a body of only statusCode and message, refunded', async (t) => {
  useEngine(failAfter(0));
  const { apiKey, before } = await account();
  const res = await post('/agent/speech', { message: { type: 'voice-request', text: SENTENCE, sampleRate: 16000 } }, apiKey);
  t.is(res.status, 502);
  const body = await res.json();
  t.deepEqual(Object.keys(body).sort(), ['message', 'statusCode']);
  t.is(body.statusCode, 502);
  tap!.restore();
  useEngine(async function* () {});
  const empty = await post('/agent/speech', { message: { type: 'voice-request', text: SENTENCE, sampleRate: 16000 } }, apiKey);
  t.is(empty.status, 502);
  t.deepEqual(Object.keys(await empty.json()).sort(), ['message', 'statusCode']);
  t.is(await remainingTokens(p, apiKey), before);
});

test.serial('/agent/speech: no worker answering within the deadline is 503, refunded', async (t) => {
  const engine = useEngine(stallAfter(0));
  const { apiKey, before } = await account();
  const res = await post('/agent/speech', { message: { type: 'voice-request', text: SENTENCE, sampleRate: 8000 } }, apiKey);
  t.is(res.status, 503);
  t.is((await res.json()).statusCode, 503);
  t.true(engine.requests[0].signal!.aborted);
  t.is(await remainingTokens(p, apiKey), before);
});

test.serial('/agent/speech cut short: the transfer is cut and refunded', async (t) => {
  useEngine(failAfter(1));
  const { apiKey, before } = await account();
  const res = await post('/agent/speech', { message: { type: 'voice-request', text: SENTENCE, sampleRate: 22050 } }, apiKey);
  t.is(res.status, 200);
  t.true((await readAll(res)).cut);
  t.is(await remainingTokens(p, apiKey), before);
});
