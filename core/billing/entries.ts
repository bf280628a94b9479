import type { LedgerEntry } from '../ports/grants.ts';
import type { Charge } from '../ports/charge.ts';

/** The charge a charge entry records, as a refund needs it (the engine is not recorded and not needed). */
export function chargeOfEntry(entry: LedgerEntry): Charge {
  return {
    id: entry.id, grantId: entry.grantId, accountId: entry.accountId, keyId: entry.keyId, tokens: entry.tokens, engine: '',
    route: entry.route, requestId: entry.requestId, dayKey: entry.dayKey ?? '', weekKey: entry.weekKey ?? '', at: entry.at,
  };
}
