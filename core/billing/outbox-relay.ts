import type { Documents } from '../ports/documents.ts';
import type { Charge } from '../ports/charge.ts';
import type { Bus } from '../ports/bus.ts';
import { TOPICS } from '../ports/bus.ts';
import type { Logger } from '../logger.ts';
import { startRelayLoop, type PassOutcome } from '../relay-loop.ts';
import { chargeOfEntry } from './entries.ts';

/** The pause between passes while entries keep coming (intervalMs once a pass finds none). */
const BUSY_INTERVAL_MS = 10;

/**
 * Publishes ledger entries written atomically with each charge or refund.
 * An entry leaves the outbox only after the bus accepted it, so a process
 * that dies between the charge and the publish still gets it published on
 * the next run; the ledger writer is idempotent on the entry id, so a
 * publish repeated after a crash counts once.
 *
 * A charge entry that names a `POST /tts` job (MongoDB, where the job and
 * the charge are two writes) is first handed to that job
 * (`jobs.confirmCharges`); one whose job was dropped meanwhile is refunded
 * here, so every charge ends with exactly one job or a refund.
 */
export function startOutboxRelay(deps: {
  documents: Documents;
  bus: Bus;
  logger: Logger;
  /** returns a charge to its payer (billing service); idempotent per charge */
  refund: (charge: Charge) => Promise<boolean>;
  intervalMs?: number;
  batch?: number;
}): () => Promise<void> {
  const batch = deps.batch ?? 500;

  const pass = async (): Promise<PassOutcome> => {
    const entries = await deps.documents.outbox.pending(batch);
    if (entries.length === 0) return 'idle';
    for (const orphan of await deps.documents.jobs.confirmCharges(entries)) {
      // Its refund entry joins the outbox and goes out with the next pass.
      if (await deps.refund(chargeOfEntry(orphan))) {
        deps.logger.warn('a charge landed for a submission that had been dropped; refunded', { chargeId: orphan.id, jobId: orphan.jobId });
      }
    }
    await deps.bus.publish(TOPICS.ledger, entries.map((e) => ({ id: e.id, key: e.grantId, value: e })));
    await deps.documents.outbox.markPublished(entries.map((e) => e.id));
    return entries.length === batch ? 'full' : 'some';
  };

  // While charges keep coming the next pass follows soon: on MongoDB the entries wait in an array of the
  // grant document, which every charge rewrites, so a long array made every charge slower (see the README).
  const loop = startRelayLoop({
    name: 'ledger outbox relay', intervalMs: deps.intervalMs ?? 100, busyIntervalMs: BUSY_INTERVAL_MS,
    pass, logger: deps.logger, flushOnStop: true,
  });
  return () => loop.stop();
}
