import type { Bus, Subscription } from '../core/ports/bus.ts';
import { TOPICS } from '../core/ports/bus.ts';
import type { Documents, LedgerEntry } from '../core/ports/documents.ts';
import type { Metrics } from '../core/metrics.ts';

/** Writes every charge and refund to the billing ledger, idempotent on the entry id. */
export async function startLedgerWriter(deps: { bus: Bus; documents: Documents; metrics: Metrics }): Promise<Subscription> {
  return deps.bus.subscribe<LedgerEntry>({
    topic: TOPICS.ledger,
    group: 'ledger-writer',
    concurrency: 4,
    handler: async (message) => {
      await deps.documents.ledger.append(message.value);
      deps.metrics.busConsumed.inc({ topic: TOPICS.ledger, group: 'ledger-writer' });
    },
  });
}
