import type { Logger } from './logger.ts';

/**
 * The loop every outbox relay runs (the ledger outbox in core/billing, the
 * `tts.jobs` publications of the jobs plugin): a pass at start, then one
 * every `intervalMs`, repeated at once while a pass says more is waiting. A
 * failed pass is logged and retried on the next tick: whatever it did not
 * mark as done is still in its outbox.
 */
export interface RelayLoop {
  /** stops the timer, waits for the pass in progress, then (with `flushOnStop`) drains what is left once */
  stop(): Promise<void>;
}

export interface RelayLoopOptions {
  name: string;
  intervalMs: number;
  /** one batch; resolves true when a full batch went and more may be waiting */
  pass: () => Promise<boolean>;
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
      try {
        while (!stopped && (await opts.pass()));
      } catch (err) {
        opts.logger.warn(`${opts.name} failed; will retry`, { err: err as Error });
      }
      if (!stopped) timer = setTimeout(tick, opts.intervalMs);
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
        while (await opts.pass());
      } catch (err) {
        opts.logger.warn(`${opts.name} not fully drained at shutdown; the next start carries on`, { err: err as Error });
      }
    },
  };
}
