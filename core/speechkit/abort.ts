import { setTimeout as delay } from 'node:timers/promises';

/**
 * One AbortError shape for every engine, whatever the signal's reason, so
 * callers can tell "the client went away" from a failure with one check.
 */

export class AbortError extends Error {
  readonly code = 'ABORT_ERR';

  constructor(message = 'The synthesis was aborted', options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AbortError';
  }
}

export function abortError(signal?: AbortSignal): AbortError {
  return new AbortError(undefined, { cause: signal?.reason });
}

export function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw abortError(signal);
}

/** True for our AbortError and for the DOMException fetch and timers throw. */
export function isAbortError(err: unknown): boolean {
  return err instanceof Error && err.name === 'AbortError';
}

/**
 * A controller that also aborts when any of the given signals does. Once it
 * is aborted (by a parent, or by its owner when the work ends) its listeners
 * come off the parents, which may live far longer. They are removed by hand:
 * with addEventListener's `signal` option Node kept some of them, and what
 * they hold, reachable after the work ended.
 */
export function linkedController(...signals: Array<AbortSignal | undefined>): AbortController {
  const controller = new AbortController();
  const unlink: Array<() => void> = [];
  for (const s of signals) {
    if (!s) continue;
    if (s.aborted) {
      controller.abort(s.reason);
      break;
    }
    const onAbort = () => controller.abort(s.reason);
    s.addEventListener('abort', onAbort, { once: true });
    unlink.push(() => s.removeEventListener('abort', onAbort));
  }
  const release = () => {
    for (const off of unlink.splice(0)) off();
  };
  if (controller.signal.aborted) release();
  else controller.signal.addEventListener('abort', release, { once: true });
  return controller;
}

/**
 * Waits `ms`, or until the signal fires if that comes first; never rejects.
 * Node's promise timer takes its listener off the signal either way: a
 * signal that lives as long as the process (a worker's shutdown signal)
 * would otherwise keep one listener, and its timer, for every wait ever made.
 */
export function pauseUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return delay(ms, undefined, { signal }).then(() => undefined, () => undefined);
}

/** Rejects with AbortError as soon as the signal fires, whatever the promise is doing. */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => { signal.removeEventListener('abort', onAbort); resolve(v); },
      (e) => { signal.removeEventListener('abort', onAbort); reject(e); },
    );
  });
}
