/**
 * One engine run for one request: pulls PCM from the engine port, counts
 * what was produced, stops the engine the moment the client goes away or
 * no audio has come for too long, and says afterwards how the run ended,
 * which is what billing and the outcome event need.
 */
import type { PcmChunk, SpeechEngine, SynthesisRequest } from '../../core/ports/engine.ts';
import { raceAbort } from '../../core/speechkit/abort.ts';

/** How a run ended: only `complete` and `client_gone` keep the charge. */
export type RunEnd = 'complete' | 'client_gone' | 'abandoned' | 'failed';
type StopReason = Exclude<RunEnd, 'complete'>;

export interface RunOptions {
  /** stop when the engine yields no audio for this long (SPEC: streams are abandoned after 120 s) */
  abandonMs: number;
  /** fires when the client disconnects */
  clientGone?: AbortSignal;
  /** fires when the server must stop serving (shutdown deadline): the run ends as failed, so it is refunded */
  interrupt?: AbortSignal;
}

/** What `prime` saw first: audio, the end of an empty run, or nothing yet. */
export type FirstEvent = 'audio' | 'empty' | 'waiting';

const noop = () => undefined;

export class SpeechRun {
  readonly sampleRate: number;
  /** samples produced so far */
  samples = 0;
  /** engine time from start until it ended or was stopped */
  genMs: number | null = null;
  /** the engine's own error when it failed */
  error: unknown = null;
  /** the server stopped the run (shutdown), not the engine or the client */
  interrupted = false;

  private readonly controller = new AbortController();
  /**
   * Takes this run's listeners off the signals it was given (the server's
   * interrupt lives as long as the process). Removed by hand: with
   * addEventListener's `signal` option, Node keeps about one run in ten
   * reachable after it ended (a soak's heap snapshots showed it).
   */
  private readonly unlisten: Array<() => void> = [];
  private readonly iterator: AsyncIterator<PcmChunk>;
  private readonly started = performance.now();
  private readonly abandonMs: number;
  private stopReason: StopReason | null = null;
  private finished = false;
  private watchdog: NodeJS.Timeout | null = null;
  /** a first chunk pulled by `prime`, handed out first by `pcm` */
  private head: Promise<Buffer | null> | null = null;

  constructor(engine: SpeechEngine, request: Omit<SynthesisRequest, 'signal'>, options: RunOptions) {
    this.sampleRate = request.sampleRate;
    this.abandonMs = options.abandonMs;
    // First, so that a run stopped right here (its client already gone) has an engine iterator to close.
    this.iterator = engine.synthesize({ ...request, signal: this.controller.signal })[Symbol.asyncIterator]();
    const gone = options.clientGone;
    if (gone?.aborted) this.stop('client_gone');
    else if (gone) this.listen(gone, () => this.stop('client_gone'));
    const interrupt = options.interrupt;
    if (interrupt?.aborted) this.interrupt();
    else if (interrupt) this.listen(interrupt, () => this.interrupt());
  }

  private listen(signal: AbortSignal, onAbort: () => void): void {
    // A run stopped while being built (its client already gone) has nothing left to take them off.
    if (this.stopReason) return;
    signal.addEventListener('abort', onAbort, { once: true });
    this.unlisten.push(() => signal.removeEventListener('abort', onAbort));
  }

  private stopListening(): void {
    for (const off of this.unlisten.splice(0)) off();
  }

  get seconds(): number {
    return this.samples / this.sampleRate;
  }

  /** null while the engine is still running */
  get end(): RunEnd | null {
    if (this.stopReason) return this.stopReason;
    if (this.error !== null) return 'failed';
    return this.finished ? 'complete' : null;
  }

  /** The server is stopping and can no longer wait for this run. */
  private interrupt(): void {
    if (this.stopReason || this.finished) return;
    this.interrupted = true;
    this.stop('failed');
  }

  /** Stops the engine at once (its AbortSignal fires); the first reason given is the one reported. */
  stop(reason: StopReason): void {
    if (this.stopReason || this.finished) return;
    this.stopReason = reason;
    this.genMs = Math.round(performance.now() - this.started);
    this.clearWatchdog();
    this.stopListening();
    this.controller.abort(reason);
    // Lets the engine's own `finally` run (kills its processes, closes its connections).
    void this.iterator.return?.()?.catch(noop);
  }

  /**
   * Waits up to `waitMs` for the first audio so that a request whose engine
   * fails at once can still be answered with an error status instead of a
   * 200 that carries nothing. Throws the engine's error.
   */
  async prime(waitMs: number): Promise<FirstEvent> {
    this.head ??= this.pull();
    this.head.catch(noop);
    let timer: NodeJS.Timeout | undefined;
    const waiting = new Promise<'waiting'>((resolve) => { timer = setTimeout(() => resolve('waiting'), waitMs); });
    try {
      const first = await Promise.race([this.head, waiting]);
      if (first === 'waiting') return 'waiting';
      return first === null ? 'empty' : 'audio';
    } finally {
      clearTimeout(timer);
    }
  }

  /** Every PCM chunk in order; throws when the engine fails or the run is stopped. */
  async *pcm(): AsyncGenerator<Buffer> {
    try {
      if (this.head) {
        const first = await this.head;
        this.head = null;
        if (first === null) return;
        yield first;
      }
      for (let chunk = await this.pull(); chunk !== null; chunk = await this.pull()) yield chunk;
    } finally {
      // A consumer that stops early (its encoder failed) must not leave the engine running.
      if (!this.finished) this.stop('failed');
    }
  }

  /**
   * The next non-empty chunk, or null at the end. The abandonment clock
   * runs only while waiting on the engine: a client reading slowly holds
   * the engine back (back-pressure) without that counting as silence.
   */
  private async pull(): Promise<Buffer | null> {
    this.armWatchdog();
    try {
      for (;;) {
        const next = this.iterator.next();
        next.catch(noop);
        let result: IteratorResult<PcmChunk>;
        try {
          result = await raceAbort(next, this.controller.signal);
        } catch (err) {
          if (!this.stopReason) this.fail(err);
          throw err;
        }
        if (result.done) {
          this.finish();
          return null;
        }
        if (result.value.pcm.length === 0) continue;
        this.samples += result.value.pcm.length >> 1;
        return result.value.pcm;
      }
    } finally {
      this.clearWatchdog();
    }
  }

  private finish(): void {
    this.finished = true;
    this.genMs = Math.round(performance.now() - this.started);
    this.clearWatchdog();
    this.stopListening();
  }

  private fail(err: unknown): void {
    this.error = err ?? new Error('engine failed');
    this.finish();
  }

  private armWatchdog(): void {
    this.clearWatchdog();
    this.watchdog = setTimeout(() => this.stop('abandoned'), this.abandonMs);
  }

  private clearWatchdog(): void {
    if (this.watchdog) clearTimeout(this.watchdog);
    this.watchdog = null;
  }
}
