import test from 'ava';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CATALOGUE } from '../../config/voices.ts';
import { EngineUnavailableError, type PcmChunk, type SpeechEngine, type SynthesisRequest } from '../../core/ports/engine.ts';
import { RemoteEngine } from '../../inference/engines/remote.ts';
import { createInferenceHandler, createInferenceServer } from '../../inference/server.ts';
import { closedPort } from '../helpers/closed-port.ts';

const voice = CATALOGUE[0];

/** A scripted engine: yields `chunks` 64 KiB chunks (Infinity for endless), then optionally fails. */
class FakeEngine implements SpeechEngine {
  readonly name = 'fake';
  produced = 0;
  constructor(private readonly script: { chunks: number; failWith?: Error; failBeforeAudio?: Error }) {}

  async *synthesize(request: SynthesisRequest): AsyncGenerator<PcmChunk> {
    if (this.script.failBeforeAudio) throw this.script.failBeforeAudio;
    for (let i = 0; i < this.script.chunks; i++) {
      if (request.signal?.aborted) throw Object.assign(new Error('aborted'), { name: 'AbortError' });
      this.produced++;
      yield { pcm: Buffer.alloc(65536, 1), sampleRate: request.sampleRate };
      await new Promise((r) => setImmediate(r));
    }
    if (this.script.failWith) throw this.script.failWith;
  }

  async ping() {}
  async close() {}
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function withServer<T>(engine: SpeechEngine, fn: (base: string) => Promise<T>): Promise<T> {
  const server = createInferenceServer(engine);
  const base = await listen(server);
  try {
    return await fn(base);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

const body = (over: Record<string, unknown> = {}) => JSON.stringify({ text: 'Xin chào.', voice, speed: 1, sampleRate: 16000, ...over });

test('the handler answers only its own paths and leaves others to the host server', async (t) => {
  const handler = createInferenceHandler(new FakeEngine({ chunks: 1 }));
  const server = createServer((req, res) => {
    void handler(req, res).then((handled) => {
      if (!handled) res.writeHead(418).end();
    });
  });
  const base = await listen(server);
  t.is((await fetch(`${base}/somewhere/else`)).status, 418);
  const health = await fetch(`${base}/internal/health`);
  t.is(health.status, 200);
  t.like(await health.json(), { status: 'ok', engine: 'fake' });
  server.close();
});

test('POST /internal/synthesize streams raw s16le with X-Sample-Rate', async (t) => {
  await withServer(new FakeEngine({ chunks: 3 }), async (base) => {
    const res = await fetch(`${base}/internal/synthesize`, { method: 'POST', body: body(), headers: { 'content-type': 'application/json' } });
    t.is(res.status, 200);
    t.is(res.headers.get('x-sample-rate'), '16000');
    t.is(res.headers.get('content-type'), 'application/octet-stream');
    t.is((await res.arrayBuffer()).byteLength, 3 * 65536);
  });
});

for (const [field, over] of [
  ['text', { text: '' }], ['voice', { voice: { id: 'x' } }], ['speed', { speed: 3 }], ['sampleRate', { sampleRate: 'fast' }],
] as const) {
  test(`a request with a bad ${field} is refused with 400 naming it`, async (t) => {
    await withServer(new FakeEngine({ chunks: 1 }), async (base) => {
      const res = await fetch(`${base}/internal/synthesize`, { method: 'POST', body: body(over) });
      t.is(res.status, 400);
      t.regex(((await res.json()) as { message: string }).message, new RegExp(field));
    });
  });
}

test('a body that is not JSON is refused with 400', async (t) => {
  await withServer(new FakeEngine({ chunks: 1 }), async (base) => {
    t.is((await fetch(`${base}/internal/synthesize`, { method: 'POST', body: '{nope' })).status, 400);
  });
});

test('an engine unavailable before any audio is 503, and the client raises EngineUnavailableError', async (t) => {
  await withServer(new FakeEngine({ chunks: 0, failBeforeAudio: new EngineUnavailableError('no model') }), async (base) => {
    const remote = new RemoteEngine({ baseUrl: base });
    await t.throwsAsync(async () => {
      for await (const _ of remote.synthesize({ text: 'Chào.', voice, speed: 1, sampleRate: 16000 })) break;
    }, { instanceOf: EngineUnavailableError, message: /no model/ });
  });
});

test('a failure after audio started cuts the stream, and the client sees an error, not a short success', async (t) => {
  await withServer(new FakeEngine({ chunks: 2, failWith: new Error('GPU fell over') }), async (base) => {
    const remote = new RemoteEngine({ baseUrl: base });
    let bytes = 0;
    await t.throwsAsync(async () => {
      for await (const c of remote.synthesize({ text: 'Chào.', voice, speed: 1, sampleRate: 16000 })) bytes += c.pcm.length;
    }, { message: /cut short/ });
    t.true(bytes > 0);
  });
});

test('an unreachable inference service is EngineUnavailableError for synthesis and ping', async (t) => {
  const server = createServer();
  const base = await listen(server);
  await new Promise((r) => server.close(r));
  const remote = new RemoteEngine({ baseUrl: base });
  await t.throwsAsync(remote.ping(), { instanceOf: EngineUnavailableError });
  await t.throwsAsync(async () => {
    for await (const _ of remote.synthesize({ text: 'Chào.', voice, speed: 1, sampleRate: 16000 })) break;
  }, { instanceOf: EngineUnavailableError });
});

test('the server writes with back-pressure: a client that does not read holds the engine back', async (t) => {
  const engine = new FakeEngine({ chunks: Infinity });
  await withServer(engine, async (base) => {
    const url = new URL(`${base}/internal/synthesize`);
    const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST' });
    req.end(body());
    const res = await new Promise<import('node:http').IncomingMessage>((resolve) => req.on('response', resolve));
    res.pause();
    // Socket buffers fill first; then the engine must stop being pulled.
    let held = -1;
    const deadline = Date.now() + 5000;
    while (held !== engine.produced && Date.now() < deadline) {
      held = engine.produced;
      await new Promise((r) => setTimeout(r, 300));
    }
    t.is(engine.produced, held, 'no progress while the client is not reading');
    t.true(held * 65536 < 64 * 1024 * 1024, `${held} chunks buffered`);
    res.destroy();
  });
});

test('the first-audio deadline does not cut off a stream that outlasts it', async (t) => {
  class SlowEngine extends FakeEngine {
    override async *synthesize(request: SynthesisRequest): AsyncGenerator<PcmChunk> {
      for (let i = 0; i < 4; i++) {
        yield { pcm: Buffer.alloc(64, 1), sampleRate: request.sampleRate };
        // The stream as a whole (3 s) outlasts the deadline (2 s); only its first audio must meet it.
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }
  await withServer(new SlowEngine({ chunks: 0 }), async (base) => {
    const remote = new RemoteEngine({ baseUrl: base, firstByteTimeoutMs: 2000 });
    let bytes = 0;
    for await (const c of remote.synthesize({ text: 'Chào.', voice, speed: 1, sampleRate: 16000 })) bytes += c.pcm.length;
    t.is(bytes, 4 * 64);
  });
});

/** An inference server that counts the synthesis requests it got. */
async function countingServer(engine: SpeechEngine): Promise<{ base: string; requests: () => number; close(): Promise<void> }> {
  const handler = createInferenceHandler(engine);
  let requests = 0;
  const server = createServer((req, res) => {
    if (req.url === '/internal/synthesize') requests++;
    void handler(req, res);
  });
  const base = await listen(server);
  return {
    base,
    requests: () => requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

const closedBase = async () => `http://127.0.0.1:${await closedPort()}`;

const speak = async (remote: RemoteEngine) => {
  let bytes = 0;
  for await (const c of remote.synthesize({ text: 'Chào.', voice, speed: 1, sampleRate: 16000 })) bytes += c.pcm.length;
  return bytes;
};

test('several instances: requests take them in turn', async (t) => {
  const [a, b] = [await countingServer(new FakeEngine({ chunks: 1 })), await countingServer(new FakeEngine({ chunks: 1 }))];
  try {
    const remote = new RemoteEngine({ baseUrl: [a.base, b.base] });
    for (let i = 0; i < 6; i++) t.is(await speak(remote), 65536);
    t.deepEqual([a.requests(), b.requests()], [3, 3]);
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});

test('an instance that cannot be reached is passed over for the next, then tried last for a while', async (t) => {
  const live = await countingServer(new FakeEngine({ chunks: 1 }));
  const dead = await closedBase();
  const attempts: string[] = [];
  const fetchSpy: typeof fetch = (input, init) => {
    attempts.push(new URL(String(input)).origin);
    return fetch(input, init);
  };
  try {
    const remote = new RemoteEngine({ baseUrl: [dead, live.base], fetch: fetchSpy, setAsideMs: 60_000 });
    for (let i = 0; i < 4; i++) t.is(await speak(remote), 65536, `request ${i} is served`);
    t.is(live.requests(), 4);
    t.deepEqual(attempts.filter((origin) => origin === dead), [dead], 'the dead instance cost one connection attempt, then went last');
    await t.notThrowsAsync(remote.ping(), 'healthy while one instance answers');
  } finally {
    await live.close();
  }
});

test('an instance that answers 503 before any audio is passed over for the next', async (t) => {
  const busy = await countingServer(new FakeEngine({ chunks: 0, failBeforeAudio: new EngineUnavailableError('model loading') }));
  const live = await countingServer(new FakeEngine({ chunks: 2 }));
  try {
    const remote = new RemoteEngine({ baseUrl: [busy.base, live.base] });
    t.is(await speak(remote), 2 * 65536);
    t.deepEqual([busy.requests(), live.requests()], [1, 1]);
  } finally {
    await Promise.all([busy.close(), live.close()]);
  }
});

test('a stream cut after audio started is not replayed on another instance', async (t) => {
  const failing = await countingServer(new FakeEngine({ chunks: 2, failWith: new Error('GPU fell over') }));
  const live = await countingServer(new FakeEngine({ chunks: 2 }));
  try {
    const remote = new RemoteEngine({ baseUrl: [failing.base, live.base] });
    await t.throwsAsync(speak(remote), { message: /cut short/ });
    t.is(live.requests(), 0, 'no second render of audio the caller already received in part');
  } finally {
    await Promise.all([failing.close(), live.close()]);
  }
});

test('every instance unreachable: EngineUnavailableError naming each, and ping fails', async (t) => {
  const [one, two] = [await closedBase(), await closedBase()];
  const remote = new RemoteEngine({ baseUrl: [one, two] });
  const err = await t.throwsAsync(speak(remote), { instanceOf: EngineUnavailableError });
  t.true(err!.message.includes(one) && err!.message.includes(two), err!.message);
  t.regex(err!.message, /ECONNREFUSED/);
  await t.throwsAsync(remote.ping(), { instanceOf: EngineUnavailableError });
});
