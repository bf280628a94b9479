import { setMaxListeners } from 'node:events';
import type http from 'node:http';

/**
 * In-flight work of the API listener, so shutdown can wait for it: a request
 * counts from its arrival until its response has ended and its outcome event
 * is published (streams included). `stopping` fires when the drain deadline
 * is reached: long responses end early and settle their money.
 */
export class Drain {
  private open = 0;
  private readonly held = new Set<Promise<unknown>>();
  private readonly waiters: Array<() => void> = [];
  private readonly stopper = new AbortController();
  /** responses of the watched listener that have not closed */
  private readonly responses = new Set<http.ServerResponse>();
  /** true once shutdown began: responses ask the client to close the connection */
  draining = false;

  constructor() {
    // Every open stream and synthesis listens for the deadline until it ends: more than ten is the normal case under load, not a leak.
    setMaxListeners(0, this.stopper.signal);
  }

  get stopping(): AbortSignal {
    return this.stopper.signal;
  }

  /** requests whose response has not ended */
  get openRequests(): number {
    return this.open;
  }

  get inFlight(): number {
    return this.open + this.held.size;
  }

  /** What is still in flight, in words (the `stopped` log line's reason when the drain did not finish). */
  describe(): string {
    const parts: string[] = [];
    if (this.open > 0) parts.push(`${this.open} response${this.open === 1 ? '' : 's'} still open`);
    if (this.held.size > 0) parts.push(`${this.held.size} outcome publication${this.held.size === 1 ? '' : 's'} or refund${this.held.size === 1 ? '' : 's'} not settled`);
    return parts.join(', ') || 'nothing in flight';
  }

  /**
   * Follows the responses of `server`, so that the deadline can close the
   * connections of those whose body had begun (`interrupt`).
   */
  watch(server: http.Server): void {
    server.on('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
      this.responses.add(res);
      res.once('close', () => this.responses.delete(res));
    });
  }

  /** Counts one request; call the returned function when its response has ended. */
  begin(): () => void {
    this.open++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.open--;
      // Only shutdown waits: other 'close' listeners of the same response (the outcome publication) register their work in this turn.
      if (this.waiters.length > 0) setImmediate(() => this.notify());
    };
  }

  /** Keeps work that outlives the response (the outcome event) in the count until it settles. */
  hold(work: Promise<unknown>): void {
    this.held.add(work);
    void work.finally(() => {
      this.held.delete(work);
      this.notify();
    });
  }

  /**
   * Ends long responses early: they refund what they cannot deliver and
   * publish their outcome. A response whose body had begun and that has not
   * closed `graceMs` later has its connection closed: its end (or the last
   * frame the handler wrote) had its chance, and a client that reads slowly
   * would otherwise keep it open, its megabytes queued, past the deadline
   * (`idle` then waits for its settlement, not for the client). A response
   * that has not begun its body keeps its connection: its handler may still
   * answer with a status.
   */
  interrupt(graceMs = 0): void {
    this.stopper.abort(new Error('the server is shutting down'));
    if (this.responses.size === 0) return;
    setTimeout(() => {
      for (const res of this.responses) {
        if (res.headersSent) res.destroy();
      }
    }, graceMs).unref();
  }

  /** Resolves when nothing is in flight, or after `ms` (false). */
  idle(ms: number): Promise<boolean> {
    if (this.inFlight === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  private notify(): void {
    if (this.waiters.length === 0 || this.inFlight > 0) return;
    for (const wake of this.waiters.splice(0)) wake();
  }
}
