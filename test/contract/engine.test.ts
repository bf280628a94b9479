/**
 * One contract for every SpeechEngine adapter: the in-process espeak-ng
 * engine, and the remote client talking to the inference server (which runs
 * espeak-ng behind a spy so the test can see what the far side saw).
 */
import test from 'ava';
import type { AddressInfo } from 'node:net';
import { CATALOGUE } from '../../config/voices.ts';
import type { PcmChunk, SpeechEngine, SynthesisRequest } from '../../core/ports/engine.ts';
import { EspeakEngine } from '../../inference/engines/espeak.ts';
import { RemoteEngine } from '../../inference/engines/remote.ts';
import { createInferenceServer } from '../../inference/server.ts';
import { rmsLevel } from '../../core/speechkit/audio/pcm.ts';

/** Wraps an engine and records, per request, whether the engine's signal fired. */
class SpyEngine implements SpeechEngine {
  readonly name = 'spy';
  readonly signals: AbortSignal[] = [];

  constructor(private readonly inner: SpeechEngine) {}

  synthesize(request: SynthesisRequest): AsyncIterable<PcmChunk> {
    if (request.signal) this.signals.push(request.signal);
    return this.inner.synthesize(request);
  }

  ping() { return this.inner.ping(); }
  close() { return this.inner.close(); }
}

interface Adapter {
  engine: SpeechEngine;
  /** the engine behind the wire, when there is one */
  farSide?: SpyEngine;
  close(): Promise<void>;
}

const ADAPTERS: Record<string, () => Promise<Adapter>> = {
  'in-process espeak-ng': async () => {
    const engine = new EspeakEngine();
    return { engine, close: () => engine.close() };
  },
  'remote client → inference server (espeak-ng)': async () => {
    const farSide = new SpyEngine(new EspeakEngine());
    const server = createInferenceServer(farSide);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const engine = new RemoteEngine({ baseUrl: `http://127.0.0.1:${port}` });
    return {
      engine,
      farSide,
      close: async () => {
        server.closeAllConnections();
        await new Promise((r) => server.close(r));
        await farSide.close();
      },
    };
  },
};

const voice = CATALOGUE[2];
const SENTENCES = (n: number) => Array.from({ length: n }, (_, i) => `Đây là câu số ${i + 1} của bài kiểm tra.`).join(' ');

async function collect(engine: SpeechEngine, request: SynthesisRequest) {
  const chunks: Array<PcmChunk & { at: number }> = [];
  const started = performance.now();
  for await (const c of engine.synthesize(request)) chunks.push({ ...c, at: performance.now() - started });
  return { chunks, pcm: Buffer.concat(chunks.map((c) => c.pcm)), total: performance.now() - started };
}

for (const [name, make] of Object.entries(ADAPTERS)) {
  let adapter: Adapter;
  test.before(async () => {
    adapter = await make();
  });
  test.after.always(async () => {
    await adapter?.close();
  });

  test.serial(`${name}: streams audio in several chunks, the first before the last is rendered`, async (t) => {
    const { chunks, pcm } = await collect(adapter.engine, { text: SENTENCES(8), voice, speed: 1, sampleRate: 24000 });
    t.true(chunks.length >= 2, `${chunks.length} chunks`);
    t.true(chunks.every((c) => c.pcm.length > 0 && c.pcm.length % 2 === 0));
    t.true(chunks[0].at < chunks[chunks.length - 1].at);
    t.true(rmsLevel(pcm) > 0.01, 'not silent');
  });

  for (const rate of [8000, 16000, 22050, 24000, 44100, 48000]) {
    test.serial(`${name}: returns the requested sample rate ${rate} Hz`, async (t) => {
      const { chunks, pcm } = await collect(adapter.engine, { text: 'Xin chào các bạn.', voice, speed: 1, sampleRate: rate });
      t.true(chunks.every((c) => c.sampleRate === rate));
      const seconds = pcm.length / 2 / rate;
      t.true(seconds > 0.5 && seconds < 4, `${seconds} s`);
    });
  }

  test.serial(`${name}: duration does not depend on the sample rate`, async (t) => {
    const text = 'Một hai ba bốn năm.';
    const low = await collect(adapter.engine, { text, voice, speed: 1, sampleRate: 8000 });
    const high = await collect(adapter.engine, { text, voice, speed: 1, sampleRate: 48000 });
    t.true(Math.abs(low.pcm.length / 2 / 8000 - high.pcm.length / 2 / 48000) < 0.01);
  });

  test.serial(`${name}: honours abort mid-stream with AbortError, and the engine doing the work sees it`, async (t) => {
    const controller = new AbortController();
    const before = adapter.farSide?.signals.length ?? 0;
    let received = 0;
    let abortedAt = 0;
    await t.throwsAsync(async () => {
      for await (const _ of adapter.engine.synthesize({ text: SENTENCES(200), voice, speed: 1, sampleRate: 48000, signal: controller.signal })) {
        if (++received === 1) {
          abortedAt = performance.now();
          controller.abort();
        }
      }
    }, { name: 'AbortError' });
    t.true(performance.now() - abortedAt < 1000, 'stops promptly');
    if (adapter.farSide) {
      const farSignal = adapter.farSide.signals[before];
      t.truthy(farSignal, 'the server-side engine was called');
      const deadline = Date.now() + 2000;
      while (!farSignal.aborted && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      t.true(farSignal.aborted, 'the server-side engine saw the abort');
    }
  });

  test.serial(`${name}: a consumer that stops reading early stops the engine`, async (t) => {
    const before = adapter.farSide?.signals.length ?? 0;
    for await (const _ of adapter.engine.synthesize({ text: SENTENCES(200), voice, speed: 1, sampleRate: 16000 })) break;
    if (adapter.farSide) {
      const farSignal = adapter.farSide.signals[before];
      const deadline = Date.now() + 2000;
      while (!farSignal.aborted && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      t.true(farSignal.aborted);
    } else {
      t.pass();
    }
  });

  test.serial(`${name}: an already-aborted signal throws AbortError`, async (t) => {
    const controller = new AbortController();
    controller.abort();
    await t.throwsAsync(collect(adapter.engine, { text: 'Xin chào.', voice, speed: 1, sampleRate: 24000, signal: controller.signal }), { name: 'AbortError' });
  });

  test.serial(`${name}: a speed outside 0.5 to 2.0 is refused`, async (t) => {
    await t.throwsAsync(collect(adapter.engine, { text: 'Xin chào.', voice, speed: 2.5, sampleRate: 24000 }), { instanceOf: RangeError });
  });

  test.serial(`${name}: ping resolves when the engine is usable`, async (t) => {
    await t.notThrowsAsync(adapter.engine.ping());
  });
}
