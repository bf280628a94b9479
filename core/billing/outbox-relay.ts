import type { Documents } from '../ports/documents.ts';
import type { Bus } from '../ports/bus.ts';
import { TOPICS } from '../ports/bus.ts';
import type { Logger } from '../logger.ts';

/**
 * Publishes ledger entries written atomically with each charge or refund.
 * An entry leaves the outbox only after the bus accepted it, so a process
 * that dies between the charge and the publish still gets it published on
 * the next run; the ledger writer is idempotent on the entry id, so a
 * publish repeated after a crash counts once.
 */
export function startOutboxRelay(deps: { documents: Documents; bus: Bus; logger: Logger; intervalMs?: number; batch?: number }): () => Promise<void> {
  const interval = deps.intervalMs ?? 100;
  const batch = deps.batch ?? 500;
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | null = null;

  const drainOnce = async (): Promise<number> => {
    const entries = await deps.documents.outbox.pending(batch);
    if (entries.length === 0) return 0;
    await deps.bus.publish(TOPICS.ledger, entries.map((e) => ({ id: e.id, key: e.grantId, value: e })));
    await deps.documents.outbox.markPublished(entries.map((e) => e.id));
    return entries.length;
  };

  const tick = () => {
    running = (async () => {
      try {
        while (!stopped && (await drainOnce()) === batch);
      } catch (err) {
        deps.logger.warn('ledger outbox relay failed; will retry', { err: err as Error });
      }
      if (!stopped) timer = setTimeout(tick, interval);
    })();
  };
  tick();

  return async () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    await running;
    // Flush what is left so a clean shutdown leaves an empty outbox.
    try {
      while ((await drainOnce()) > 0);
    } catch (err) {
      deps.logger.warn('ledger outbox not fully drained at shutdown; it will be published on the next start', { err: err as Error });
    }
  };
}
