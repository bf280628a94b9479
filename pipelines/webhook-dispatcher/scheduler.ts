import { randomUUID } from 'node:crypto';
import type { Logger } from '../../core/logger.ts';
import type { Metrics } from '../../core/metrics.ts';
import { WEBHOOK_TEST_EVENT, type ClaimedDelivery, type WebhooksStore } from '../../core/ports/webhooks.ts';
import { attemptRecord, type AttemptOutcome } from './attempt.ts';
import type { Clock } from './schedule.ts';

/**
 * The delivery loop: leases due deliveries from the store, runs their
 * attempts with bounded concurrency (overall, per endpoint so that one slow
 * receiver cannot take every slot, and per account so that one account's
 * many slow receivers cannot either) and writes each result back. All state
 * that matters is in the store; what is kept here is only what is in flight.
 */
export interface SchedulerOptions {
  /** attempts in flight at once in this dispatcher */
  concurrency: number;
  /** attempts in flight at once for one endpoint */
  maxPerEndpoint: number;
  /** attempts in flight at once for one account, all its endpoints together */
  maxPerAccount: number;
  /** how long a claim holds a delivery; longer than the slowest attempt */
  leaseMs: number;
  /** how often the store is looked at when nothing wakes the loop */
  pollIntervalMs: number;
  retryScale: number;
}

export interface SchedulerDeps {
  store: WebhooksStore;
  attempt(delivery: ClaimedDelivery['delivery']): Promise<AttemptOutcome>;
  clock: Clock;
  logger: Logger;
  metrics?: Pick<Metrics, 'webhookDeliveries' | 'webhookDeliveriesDead'>;
  options: SchedulerOptions;
}

export interface Scheduler {
  /** runs every attempt due now (and those that become due while it runs) until none is left; returns how many ran */
  runDue(): Promise<number>;
  /** starts the background loop */
  start(): void;
  /** asks the loop to look at the store now (new deliveries were enqueued) */
  wake(): void;
  /** stops claiming and waits for the attempts in flight */
  stop(): Promise<void>;
}

export function createScheduler(deps: SchedulerDeps): Scheduler {
  const { store, clock, logger, options } = deps;
  const perEndpoint = new Map<string, number>();
  const perAccount = new Map<string, number>();
  const count = (map: Map<string, number>, id: string, by: 1 | -1) => {
    const n = (map.get(id) ?? 0) + by;
    if (n <= 0) map.delete(id);
    else map.set(id, n);
  };
  const running = new Set<Promise<void>>();
  let stopped = false;
  let loop: Promise<void> | null = null;
  let woken = false;
  let wakeUp: (() => void) | null = null;

  const wake = () => {
    woken = true;
    wakeUp?.();
  };

  async function run(claimed: ClaimedDelivery): Promise<void> {
    const { delivery, leaseToken } = claimed;
    try {
      const outcome = await deps.attempt(delivery);
      const record = attemptRecord(delivery, leaseToken, outcome, options.retryScale);
      const written = await store.recordAttempt(record);
      deps.metrics?.webhookDeliveries.inc({ result: outcome.error ?? 'delivered' });
      // A failed test event loses no job event: it is not counted with the deliveries that died.
      if (written && record.status === 'DEAD' && delivery.eventType !== WEBHOOK_TEST_EVENT) deps.metrics?.webhookDeliveriesDead.inc();
      if (!written) logger.warn('webhook attempt finished after its lease was taken over; result dropped', { deliveryId: delivery.id });
    } catch (err) {
      // Nothing recorded: the lease runs out and the same attempt is made again.
      logger.error('webhook attempt failed unexpectedly', { err: err as Error, deliveryId: delivery.id });
    }
  }

  function launch(claimed: ClaimedDelivery): void {
    const { endpointId, accountId } = claimed.delivery;
    count(perEndpoint, endpointId, 1);
    count(perAccount, accountId, 1);
    const task: Promise<void> = run(claimed).finally(() => {
      count(perEndpoint, endpointId, -1);
      count(perAccount, accountId, -1);
      running.delete(task);
      wake();
    });
    running.add(task);
  }

  /** Claims as many due deliveries as there is room for and starts them. */
  async function fill(): Promise<number> {
    const room = options.concurrency - running.size;
    if (room <= 0 || stopped) return 0;
    const now = clock.now();
    const claimed = await store.claimDue({
      now: new Date(now),
      leaseUntil: new Date(now + options.leaseMs),
      leaseToken: randomUUID(),
      limit: room,
      maxPerEndpoint: options.maxPerEndpoint,
      inFlight: perEndpoint,
      maxPerAccount: options.maxPerAccount,
      inFlightByAccount: perAccount,
    });
    for (const c of claimed) launch(c);
    return claimed.length;
  }

  async function backgroundLoop(): Promise<void> {
    while (!stopped) {
      woken = false;
      try {
        await fill();
      } catch (err) {
        logger.error('could not claim webhook deliveries', { err: err as Error });
      }
      if (stopped) continue;
      if (woken) {
        // Let the other attempts finishing in this turn free their slots too: one claim for all of them.
        await new Promise((resolve) => setImmediate(resolve));
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, options.pollIntervalMs);
        wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wakeUp = null;
    }
  }

  return {
    async runDue() {
      let made = 0;
      for (;;) {
        const started = await fill();
        made += started;
        if (started === 0 && running.size === 0) return made;
        if (started === 0) await Promise.race(running);
      }
    },
    start() {
      loop ??= backgroundLoop();
    },
    wake,
    async stop() {
      stopped = true;
      wakeUp?.();
      await loop;
      await Promise.allSettled([...running]);
    },
  };
}
