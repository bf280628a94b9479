import type { Logger } from './logger.ts';

/**
 * The loop every outbox relay runs (the ledger outbox in core/billing, the
 * `tts.jobs` publications of the jobs plugin): a pass at start, then one
 * every `intervalMs`, repeated at once while a pass says more is waiting,
 * and after `busyIntervalMs` when it found some. A failed pass is logged and
 * retried on the next tick: whatever it did not mark as done is still in
 * its outbox.
 */

/** What a pass found: nothing to do, some work, or a full batch (more may be waiting). */
export type PassOutcome = 'idle' | 'some' | 'full';
export interface RelayLoop {
  /** stops the timer, waits for the pass in progress, then (with `flushOnStop`) drains what is left once */
  stop(): Promise<void>;
}

export interface RelayLoopOptions {
  name: string;
  intervalMs: number;
  /**
   * After a pass that found work, the next one comes this soon (default
   * intervalMs): an outbox written to steadily is kept short, while an idle
   * one is looked at only every intervalMs.
   */
  busyIntervalMs?: number;
  /** one batch */
  pass: () => Promise<PassOutcome>;
  logger: Logger;
  /** drain until empty at stop (a clean shutdown leaves an empty outbox) */
  flushOnStop?: boolean;
}

export function startRelayLoop(opts: RelayLoopOptions): RelayLoop {
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | null = null;

  const tick = () => {
    timer = null;
    running = (async () => {
      let outcome: PassOutcome = 'idle';
      try {
        do outcome = await opts.pass();
        while (!stopped && outcome === 'full');
      } catch (err) {
        outcome = 'idle';
        opts.logger.warn(`${opts.name} failed; will retry`, { err: err as Error });
      }
      if (!stopped) timer = setTimeout(tick, outcome === 'idle' ? opts.intervalMs : (opts.busyIntervalMs ?? opts.intervalMs));
    })();
  };
  tick();

  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      if (!opts.flushOnStop) return;
      try {
        while ((await opts.pass()) === 'full');
      } catch (err) {
        opts.logger.warn(`${opts.name} not fully drained at shutdown; the next start carries on`, { err: err as Error });
      }
    },
  };
}
