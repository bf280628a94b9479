import type { Bus, Subscription } from '../core/ports/bus.ts';
import { TOPICS } from '../core/ports/bus.ts';
import type { Analytics, JobCloseEvent, OutcomeEvent } from '../core/ports/analytics.ts';
import type { Metrics } from '../core/metrics.ts';

export const JOB_CLOSES_TOPIC = 'usage.job-closes';

/**
 * Moves request outcomes into the analytics store in batches flushed by size
 * and by time. Offsets commit only after the batch is written, and the store
 * is idempotent on event ids, so a store outage delays events without losing
 * or doubling any.
 */
export async function startUsageAggregator(deps: { bus: Bus; analytics: Analytics; metrics: Metrics; maxBatch?: number; maxWaitMs?: number }): Promise<Subscription> {
  const maxBatch = deps.maxBatch ?? 5000;
  const maxWaitMs = deps.maxWaitMs ?? 250;
  const outcomes = await deps.bus.subscribeBatch<OutcomeEvent>({
    topic: TOPICS.outcomes,
    group: 'usage-aggregator',
    maxBatch,
    maxWaitMs,
    handler: async (messages) => {
      await deps.analytics.recordOutcomes(messages.map((m) => m.value));
      deps.metrics.busConsumed.inc({ topic: TOPICS.outcomes, group: 'usage-aggregator' }, messages.length);
    },
  });
  const closes = await deps.bus.subscribeBatch<JobCloseEvent>({
    topic: JOB_CLOSES_TOPIC,
    group: 'usage-aggregator',
    maxBatch,
    maxWaitMs,
    handler: async (messages) => {
      await deps.analytics.recordJobCloses(messages.map((m) => m.value));
      deps.metrics.busConsumed.inc({ topic: JOB_CLOSES_TOPIC, group: 'usage-aggregator' }, messages.length);
    },
  });
  return {
    async stop() {
      await Promise.all([outcomes.stop(), closes.stop()]);
    },
  };
}
