import type { HoldsStore } from '../ports/documents.ts';
import type { Charge } from '../ports/charge.ts';
import type { Logger } from '../logger.ts';
import type { Bus } from '../ports/bus.ts';
import { TOPICS } from '../ports/bus.ts';
import { cutOffOutcomeEvent } from '../http/outcome.ts';
import { startRelayLoop, type PassOutcome } from '../relay-loop.ts';
import { chargeOfEntry } from './entries.ts';

/** Orphans refunded in one pass; a pass that finds this many goes on at once. */
const BATCH = 100;

/**
 * Refunds the charges of requests that their process stopped answering
 * before they settled: a crash, a SIGKILL, an out-of-memory kill. Their
 * clients saw a cut connection and no complete audio, which SPEC Billing
 * rule 3 refunds, but the refund the request would have made died with it.
 *
 * Each process beats every lease/6, saying it is alive for one lease; a hold
 * (ChargeCommand.holdFor) whose process's lease has run out, on a charge at
 * least one lease old (a process serves requests before its first beat
 * lands), is an orphan. A process judges others only once its own beats
 * have landed for a whole lease: after a store outage every lease has run
 * out, and the live processes must renew theirs before anyone is refunded.
 * Refunds are idempotent per charge, so two processes recovering the same
 * orphan, or a request that refunded itself just before the crash, refund
 * once. In doubt, the customer keeps the tokens: a request answered in full
 * whose release the crash cut off is refunded too. Each refund publishes the
 * request's outcome (an error, refunded) under the request's own outcome id,
 * so usage counts the request once.
 */
export function startHoldRecovery(deps: {
  holds: HoldsStore;
  /** this process, as its holds name it */
  instance: string;
  leaseMs: number;
  /** returns a charge to its payer; idempotent per charge */
  refund: (charge: Charge) => Promise<boolean>;
  /** retries the releases of this process that failed (billing.release([])) */
  retryReleases?: () => Promise<void>;
  /** where the outcomes of the cut requests go, so that usage shows them (errors, refunded) */
  bus: Bus;
  logger: Logger;
  now?: () => number;
  /** time between passes (default lease/6; tests move `now` instead) */
  intervalMs?: number;
}): () => Promise<void> {
  const now = deps.now ?? Date.now;
  /** since when this process's beats have landed without a miss (null: the last one failed) */
  let beatingSince: number | null = null;

  const pass = async (): Promise<PassOutcome> => {
    const at = now();
    try {
      await deps.holds.beat(deps.instance, at + deps.leaseMs);
    } catch (err) {
      beatingSince = null;
      throw err;
    }
    beatingSince ??= at;
    await deps.retryReleases?.();
    // After a start, or a store outage that stopped every process's beats, the others get a lease to beat again first.
    if (at - beatingSince < deps.leaseMs) return 'idle';
    const found = await deps.holds.orphaned(at, BATCH);
    const orphans = found.filter((entry) => Date.parse(entry.at) <= at - deps.leaseMs);
    if (orphans.length === 0) return 'idle';
    const refunded = [];
    for (const entry of orphans) if (await deps.refund(chargeOfEntry(entry))) refunded.push(entry);
    // A request that refunded itself before the crash published its own outcome (or was about to).
    const outcomes = refunded.map((entry) => cutOffOutcomeEvent(entry, new Date(at)));
    if (outcomes.length > 0) await deps.bus.publish(TOPICS.outcomes, outcomes.map((event) => ({ id: event.id, key: event.accountId!, value: event })));
    const tokens = refunded.reduce((sum, entry) => sum + entry.tokens, 0);
    await deps.holds.release(orphans.map((entry) => ({ grantId: entry.grantId, chargeId: entry.id })));
    deps.logger.warn('refunded the charges of requests a stopped process never settled', {
      holds: orphans.length, refunded: refunded.length, tokens, charges: orphans.slice(0, 10).map((entry) => entry.id),
    });
    // Younger holds sort last: a batch of old orphans only means more may be waiting.
    return orphans.length === BATCH ? 'full' : 'some';
  };

  const loop = startRelayLoop({ name: 'charge hold recovery', intervalMs: deps.intervalMs ?? Math.max(50, deps.leaseMs / 6), pass, logger: deps.logger });
  return () => loop.stop();
}
