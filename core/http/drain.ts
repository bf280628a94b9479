import { setMaxListeners } from 'node:events';

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

  /** Ends long responses early: they refund what they cannot deliver and publish their outcome. */
  interrupt(): void {
    this.stopper.abort(new Error('the server is shutting down'));
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
