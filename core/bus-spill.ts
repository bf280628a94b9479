/**
 * A bus outage longer than the bus's publish deadline (120 s by default)
 * used to lose the events published meanwhile: each publish failed and was
 * logged. The events of core's log phase are now kept in the system of
 * record instead (the documents port's `spill`), and a relay in every api
 * process publishes them once the bus takes messages again. Consumers are
 * idempotent on message ids, so an event published late, or twice (a crash
 * between the relay's publish and its clean-up, two processes' relays at
 * once), counts once.
 */
import type { Bus, OutgoingMessage } from './ports/bus.ts';
import type { SpillStore } from './ports/documents.ts';
import type { Logger } from './logger.ts';
import { startRelayLoop, type PassOutcome } from './relay-loop.ts';

export type Durable = 'published' | 'spilled';

/**
 * Publishes `messages`, or keeps them in `spill` when the bus refuses them.
 * Rejects only when both failed (the messages are lost, and the caller logs it).
 */
export async function publishOrSpill(deps: { bus: Bus; spill: SpillStore; logger: Logger }, topic: string, messages: OutgoingMessage[]): Promise<Durable> {
  try {
    await deps.bus.publish(topic, messages);
    return 'published';
  } catch (busError) {
    try {
      await deps.spill.add(messages.map((m) => ({ topic, ...m })));
    } catch (spillError) {
      throw new AggregateError([busError, spillError], `${topic}: neither the bus nor the spill store took ${messages.length} message(s)`);
    }
    deps.logger.warn('the bus refused messages; kept for the spill relay', { topic, messages: messages.length, err: busError as Error });
    return 'spilled';
  }
}

/** Publishes spilled messages, the oldest first, each topic's in one call; a message leaves the spill once the bus took it. */
export function startSpillRelay(deps: { bus: Bus; spill: SpillStore; logger: Logger; intervalMs: number; batch?: number }): () => Promise<void> {
  const batch = deps.batch ?? 500;
  const pass = async (): Promise<PassOutcome> => {
    const spilled = await deps.spill.pending(batch);
    if (spilled.length === 0) return 'idle';
    const byTopic = new Map<string, OutgoingMessage[]>();
    for (const { topic, id, key, value } of spilled) {
      const list = byTopic.get(topic) ?? [];
      list.push({ id, key, value });
      byTopic.set(topic, list);
    }
    for (const [topic, messages] of byTopic) await deps.bus.publish(topic, messages);
    await deps.spill.remove(spilled);
    deps.logger.info('published messages the bus had refused earlier', { messages: spilled.length, topics: [...byTopic.keys()] });
    return spilled.length === batch ? 'full' : 'some';
  };
  const loop = startRelayLoop({ name: 'bus spill relay', intervalMs: deps.intervalMs, pass, logger: deps.logger });
  return () => loop.stop();
}
