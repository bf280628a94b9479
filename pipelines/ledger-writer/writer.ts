import type { Bus, Subscription } from '../../core/ports/bus.ts';
import { TOPICS } from '../../core/ports/bus.ts';
import type { Documents, LedgerEntry } from '../../core/ports/documents.ts';

/** Writes every charge and refund to the billing ledger, idempotent on the entry id. */
export async function startLedgerWriter(deps: { bus: Bus; documents: Documents }): Promise<Subscription> {
  return deps.bus.subscribe<LedgerEntry>({
    topic: TOPICS.ledger,
    group: 'ledger-writer',
    concurrency: 4,
    handler: async (message) => {
      await deps.documents.ledger.append(message.value);
    },
  });
}
