import test from 'ava';
import { getEventListeners } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { PcmChunk, SpeechEngine, SynthesisRequest } from '../../core/ports/engine.ts';
import { CATALOGUE } from '../../config/voices.ts';
import { SpeechRun } from '../../plugins/speech/synthesis.ts';
import { sleep } from '../helpers/engine-tap.ts';

/** An engine scripted as a list of steps: bytes of audio, a pause, or a failure. */
type Step = number | { wait: number } | { fail: string };

function scripted(steps: Step[]): SpeechEngine & { signals: AbortSignal[] } {
  const signals: AbortSignal[] = [];
  return {
    name: 'scripted',
    signals,
    async *synthesize(request: SynthesisRequest): AsyncGenerator<PcmChunk> {
      signals.push(request.signal!);
      for (const step of steps) {
        if (typeof step === 'number') yield { pcm: Buffer.alloc(step), sampleRate: request.sampleRate };
        else if ('wait' in step) await sleep(step.wait, request.signal);
        else throw new Error(step.fail);
      }
    },
    async ping() {},
    async close() {},
  };
}

// The collection test below needs gc(): exposed once for this worker.
setFlagsFromString('--expose-gc');

const request = { text: 'Xin chào.', voice: CATALOGUE[0], speed: 1, sampleRate: 8000 };

async function drain(run: SpeechRun, pauseMs = 0): Promise<unknown> {
  try {
    for await (const _ of run.pcm()) if (pauseMs) await sleep(pauseMs);
    return null;
  } catch (err) {
    return err;
  }
}

test('a complete run counts samples and seconds, skips empty chunks and records generation time', async (t) => {
  const run = new SpeechRun(scripted([1600, 0, 3200]), request, { abandonMs: 1000 });
  t.is(await drain(run), null);
  t.is(run.end, 'complete');
  t.is(run.samples, 2400);
  t.is(run.seconds, 0.3);
  t.is(typeof run.genMs, 'number');
});

test('prime reports the first audio, an empty run, or that nothing came yet; pcm() still yields everything', async (t) => {
  const audio = new SpeechRun(scripted([100, 200]), request, { abandonMs: 1000 });
  t.is(await audio.prime(500), 'audio');
  const seen: number[] = [];
  for await (const chunk of audio.pcm()) seen.push(chunk.length);
  t.deepEqual(seen, [100, 200]);

  t.is(await new SpeechRun(scripted([]), request, { abandonMs: 1000 }).prime(500), 'empty');

  const slow = new SpeechRun(scripted([{ wait: 150 }, 100]), request, { abandonMs: 1000 });
  t.is(await slow.prime(20), 'waiting');
  t.is(await drain(slow), null);
  t.is(slow.samples, 50);
});

test('an engine failure ends the run as failed and keeps the error', async (t) => {
  const run = new SpeechRun(scripted([100, { fail: 'boom' }]), request, { abandonMs: 1000 });
  const err = await drain(run);
  t.is((err as Error).message, 'boom');
  t.is(run.end, 'failed');
  t.is(run.samples, 50);
});

test('a failure before any audio is thrown by prime', async (t) => {
  const run = new SpeechRun(scripted([{ fail: 'no worker' }]), request, { abandonMs: 1000 });
  await t.throwsAsync(run.prime(500), { message: 'no worker' });
  t.is(run.end, 'failed');
});

test('no audio for abandonMs: the run is abandoned and the engine sees its signal fire', async (t) => {
  const engine = scripted([100, { wait: 10_000 }, 100]);
  const run = new SpeechRun(engine, request, { abandonMs: 80 });
  const started = Date.now();
  const err = await drain(run);
  t.is((err as Error).name, 'AbortError');
  t.is(run.end, 'abandoned');
  t.true(engine.signals[0].aborted);
  t.true(Date.now() - started < 2000);
});

test('a slow reader (back-pressure) does not count as silence', async (t) => {
  const run = new SpeechRun(scripted([100, 100, 100]), request, { abandonMs: 50 });
  t.is(await drain(run, 120), null);
  t.is(run.end, 'complete');
});

test('the client going away stops the engine at once and is reported as client_gone', async (t) => {
  const engine = scripted([100, { wait: 10_000 }, 100]);
  const gone = new AbortController();
  const run = new SpeechRun(engine, request, { abandonMs: 60_000, clientGone: gone.signal });
  const pending = drain(run);
  await sleep(30);
  gone.abort();
  t.is(((await pending) as Error).name, 'AbortError');
  t.is(run.end, 'client_gone');
  t.true(engine.signals[0].aborted);
});

test('a consumer that stops early stops the engine; the first reason given wins', async (t) => {
  const engine = scripted([100, { wait: 10_000 }]);
  const run = new SpeechRun(engine, request, { abandonMs: 60_000 });
  for await (const _ of run.pcm()) break;
  t.is(run.end, 'failed');
  t.true(engine.signals[0].aborted);
  run.stop('client_gone');
  t.is(run.end, 'failed');
});

test('a run that ended, completed, failed or stopped, leaves no listener on the server-wide interrupt signal (it would keep every run alive)', async (t) => {
  const interrupt = new AbortController();
  const gone = new AbortController();
  const complete = new SpeechRun(scripted([1600]), request, { abandonMs: 1000, interrupt: interrupt.signal, clientGone: gone.signal });
  t.is(getEventListeners(interrupt.signal, 'abort').length, 1, 'listening while it runs');
  await drain(complete);
  const failed = new SpeechRun(scripted([{ fail: 'engine broke' }]), request, { abandonMs: 1000, interrupt: interrupt.signal });
  await drain(failed);
  const stopped = new SpeechRun(scripted([1600, { wait: 5000 }]), request, { abandonMs: 10_000, interrupt: interrupt.signal });
  stopped.stop('client_gone');
  await drain(stopped);
  t.is(complete.end, 'complete');
  t.is(getEventListeners(interrupt.signal, 'abort').length, 0);
  t.is(getEventListeners(gone.signal, 'abort').length, 0);
  // A client already gone when the run is built: stopped at once, and nothing is left listening.
  const left = new AbortController();
  left.abort();
  const never = new SpeechRun(scripted([1600]), request, { abandonMs: 1000, interrupt: interrupt.signal, clientGone: left.signal });
  await drain(never);
  t.is(never.end, 'client_gone');
  t.is(getEventListeners(interrupt.signal, 'abort').length, 0);
});

test('ended runs can be collected while the server-wide interrupt signal lives on (a soak showed one in ten kept)', async (t) => {
  const gc = runInNewContext('gc') as () => void;
  const interrupt = new AbortController();
  const refs: Array<WeakRef<SpeechRun>> = [];
  // In a function of its own, so that no frame of this test still holds the last run.
  const oneRun = async (i: number) => {
    const gone = new AbortController();
    const run = new SpeechRun(scripted([1600, 1600, 1600]), request, { abandonMs: 1000, interrupt: interrupt.signal, clientGone: gone.signal });
    refs.push(new WeakRef(run));
    let chunks = 0;
    try {
      // Every third client leaves after the first chunk.
      for await (const _ of run.pcm()) if (++chunks === 1 && i % 3 === 0) gone.abort();
    } catch {
      // a run stopped by its client ends with an AbortError
    }
  };
  await Promise.all(Array.from({ length: 4 }, async (_, worker) => {
    for (let i = 0; i < 50; i++) await oneRun(worker * 50 + i);
  }));
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    gc();
  }
  t.is(refs.filter((ref) => ref.deref() !== undefined).length, 0);
});
