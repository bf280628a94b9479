/**
 * Bus port: keyed topics, consumer groups, at-least-once delivery, offsets
 * committed only after the handler succeeds. A message that keeps failing is
 * moved to `<topic>.dlq` after `maxAttempts`; a failure because a store or
 * broker was out of reach (or a disk full) uses up no attempt, so an outage
 * delays messages and dead-letters none.
 * Adapters: core/adapters/bus/local.ts (durable log in the embedded database
 * file) and core/adapters/bus/kafka.ts (kafkajs).
 */

export interface BusMessage<T = unknown> {
  /** stable id; consumers are idempotent on it */
  id: string;
  key: string;
  value: T;
  /** ISO time of publication */
  publishedAt: string;
  /** 1 on first delivery, grows on redelivery */
  attempt: number;
}

export interface OutgoingMessage<T = unknown> {
  id: string;
  key: string;
  value: T;
}

export type MessageHandler<T = unknown> = (message: BusMessage<T>) => Promise<void>;

export interface SubscribeOptions<T = unknown> {
  topic: string;
  group: string;
  handler: MessageHandler<T>;
  /** messages handled at once within this subscriber (default 1) */
  concurrency?: number;
  /** failed deliveries before a message goes to the dead-letter topic (default 5); an unreachable dependency's failures do not count */
  maxAttempts?: number;
}

/** Batch handler: receives up to `maxBatch` messages; all are committed when it resolves. */
export interface BatchSubscribeOptions<T = unknown> {
  topic: string;
  group: string;
  maxBatch: number;
  /**
   * wait at most this long to fill a batch. A group catching up does not
   * wait: a batch that filled (or left messages behind it on the bus) is
   * followed at once by the next, the tail included.
   */
  maxWaitMs: number;
  handler: (messages: BusMessage<T>[]) => Promise<void>;
}

export interface Subscription {
  /** stops fetching, waits for in-flight handlers, leaves the group */
  stop(): Promise<void>;
}

export interface TopicStats {
  topic: string;
  group: string;
  /** messages published but not yet committed by the group */
  lag: number;
}

export interface Bus {
  publish<T>(topic: string, messages: OutgoingMessage<T>[]): Promise<void>;
  subscribe<T>(options: SubscribeOptions<T>): Promise<Subscription>;
  subscribeBatch<T>(options: BatchSubscribeOptions<T>): Promise<Subscription>;
  lag(topic: string, group: string): Promise<number>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export const TOPICS = {
  outcomes: 'request.outcomes',
  ledger: 'ledger.entries',
  jobs: 'tts.jobs',
  jobEvents: 'tts.job.events',
  chapters: 'audiobook.chapters',
} as const;
