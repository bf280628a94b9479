import type { BatchSubscribeOptions, Bus, SubscribeOptions } from './ports/bus.ts';
import type { Metrics } from './metrics.ts';

/**
 * Wraps whichever bus adapter is configured so every publish and every
 * handled message is counted, and consumer lag is read for each subscribed
 * (topic, group) when Prometheus scrapes. Callers never count by hand.
 */
export function instrumentBus(bus: Bus, metrics: Metrics): Bus {
  const watched = new Map<string, { topic: string; group: string }>();
  const watch = (topic: string, group: string) => watched.set(`${topic}\u0000${group}`, { topic, group });

  metrics.registerCollector(async () => {
    await Promise.all([...watched.values()].map(async ({ topic, group }) => {
      try {
        metrics.busLag.set({ topic, group }, await bus.lag(topic, group));
      } catch {
        // An unreachable bus shows up in /readyz; the gauge keeps its last value.
      }
    }));
  });

  return {
    async publish(topic, messages) {
      await bus.publish(topic, messages);
      if (messages.length > 0) metrics.busPublished.inc({ topic }, messages.length);
    },
    subscribe<T>(options: SubscribeOptions<T>) {
      watch(options.topic, options.group);
      return bus.subscribe<T>({
        ...options,
        handler: async (message) => {
          await options.handler(message);
          metrics.busConsumed.inc({ topic: options.topic, group: options.group });
        },
      });
    },
    subscribeBatch<T>(options: BatchSubscribeOptions<T>) {
      watch(options.topic, options.group);
      return bus.subscribeBatch<T>({
        ...options,
        handler: async (messages) => {
          await options.handler(messages);
          metrics.busConsumed.inc({ topic: options.topic, group: options.group }, messages.length);
        },
      });
    },
    lag: (topic, group) => bus.lag(topic, group),
    ping: () => bus.ping(),
    close: () => bus.close(),
  };
}
