/**
 * Wraps the running platform's engine port so a test can see every
 * synthesis request (and its AbortSignal) and change what the engine does:
 * fail after a few chunks, stall, or slow down. Plugins call the port at
 * request time, so replacing the method on the shared instance reaches them.
 */
import type { PcmChunk, SpeechEngine, SynthesisRequest } from '../../core/ports/engine.ts';

export type Behaviour = (request: SynthesisRequest, real: (request: SynthesisRequest) => AsyncIterable<PcmChunk>) => AsyncIterable<PcmChunk>;

export interface EngineTap {
  /** every request the engine received, in order */
  requests: SynthesisRequest[];
  /** puts the real method back */
  restore(): void;
}

export function tapEngine(engine: SpeechEngine, behaviour: Behaviour = (request, real) => real(request)): EngineTap {
  const original = engine.synthesize;
  const requests: SynthesisRequest[] = [];
  const real = (request: SynthesisRequest) => original.call(engine, request);
  engine.synthesize = (request) => {
    requests.push(request);
    return behaviour(request, real);
  };
  return {
    requests,
    restore() {
      delete (engine as { synthesize?: unknown }).synthesize;
      if (engine.synthesize !== original) engine.synthesize = original;
    },
  };
}

/** Real audio for `chunks` chunks, then the engine fails (a worker dying mid-stream). */
export function failAfter(chunks: number, message = 'worker died mid-stream'): Behaviour {
  return async function* (request, real) {
    let n = 0;
    for await (const chunk of real(request)) {
      if (n++ >= chunks) throw new Error(message);
      yield chunk;
    }
    throw new Error(message);
  };
}

/** Real audio, each chunk held back `ms` (synthesis slower than real time). */
export function slowBy(ms: number): Behaviour {
  return async function* (request, real) {
    for await (const chunk of real(request)) {
      await sleep(ms, request.signal);
      yield chunk;
    }
  };
}

/** Real audio for `chunks` chunks, then nothing ever again (a hung worker); honours the abort signal. */
export function stallAfter(chunks: number): Behaviour {
  return async function* (request, real) {
    let n = 0;
    for await (const chunk of real(request)) {
      if (n++ >= chunks) break;
      yield chunk;
    }
    await sleep(3_600_000, request.signal);
  };
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(Object.assign(new Error('aborted'), { name: 'AbortError' }));
    // The listener goes when the pause ends: a slow engine pauses once per chunk on one request's signal.
    const onAbort = () => {
      clearTimeout(timer);
      reject(Object.assign(new Error('aborted'), { name: 'AbortError' }));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A run that ends normally with no samples at all (an engine that produced nothing). */
export function silent(): Behaviour {
  return async function* () {};
}
