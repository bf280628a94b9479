import { EventEmitter } from 'node:events';
import type { EmbeddedDb } from '../embedded-db.ts';
import type { BatchSubscribeOptions, Bus, OutgoingMessage, SubscribeOptions, Subscription } from '../../ports/bus.ts';
import { runBatchWorker, runMessageWorker, type ConsumerContext } from './local-consumer.ts';
import { GroupState, Member } from './local-group.ts';
import { openMessageLog, type StoredMessage } from './local-log.ts';
import { DEFAULT_MAX_ATTEMPTS, DLQ_SUFFIX, loggerReporter, publishUntil, type BusErrorReporter } from './retry.ts';
import { isUnreachableDependency } from '../../unreachable.ts';

/**
 * The embedded bus: a durable, partitioned log in the shared SQLite file with
 * Kafka's delivery contract (keyed partitions, consumer groups, commit after
 * the handler resolves, retry then `<topic>.dlq`). Consumers poll every
 * `pollMs` and are woken at once by publishes made in this process.
 * Group membership is coordinated within one process: two processes on the
 * same file and group would both read every partition.
 */

export interface LocalBusOptions {
  /** how often an idle consumer looks for messages published by another process (default 250) */
  pollMs?: number;
  /** partitions of a topic created by this bus (default 8); a topic keeps the count it was created with */
  partitions?: number;
  /** first retry delay, doubled on each further attempt (default 200) */
  retryBackoffMs?: number;
  /** messages kept per partition even if a group lags behind (default 100000; dropped a segment at a time) */
  retainPerPartition?: number;
  /** messages per segment of a partition's log, the unit pruning drops (default 4096) */
  segmentSize?: number;
  /** handler failures; defaults to one line on stderr */
  onError?: BusErrorReporter;
  /**
   * how long a publish keeps trying while the file cannot take the write (a
   * full or failing disk) before it fails (default 120000, as on Kafka)
   */
  publishTimeoutMs?: number;
}

interface SharedState {
  published: EventEmitter;
  groups: Map<string, GroupState>;
}

/** Most messages waiting at once for the disk to take them again (about 10 MB of outcome events). */
const MAX_RETRYING = 10_000;

// Buses opened on the same database object share wake-ups and group membership.
const sharedByDb = new WeakMap<EmbeddedDb, SharedState>();

function sharedState(db: EmbeddedDb): SharedState {
  let shared = sharedByDb.get(db);
  if (!shared) {
    const published = new EventEmitter();
    published.setMaxListeners(0);
    shared = { published, groups: new Map() };
    sharedByDb.set(db, shared);
  }
  return shared;
}

export function createLocalBus(db: EmbeddedDb, opts: LocalBusOptions = {}): Bus {
  const pollMs = opts.pollMs ?? 250;
  const retryBackoffMs = opts.retryBackoffMs ?? 200;
  const onError = opts.onError ?? loggerReporter('local');
  const publishTimeoutMs = opts.publishTimeoutMs ?? 120_000;
  const log = openMessageLog(db, opts.partitions ?? 8, opts.retainPerPartition ?? 100_000, opts.segmentSize);
  const shared = sharedState(db);
  const subscriptions = new Set<Subscription>();
  let closed = false;
  /** messages whose publish waits to be tried again */
  let retrying = 0;

  function publishNow(topic: string, messages: OutgoingMessage[]): void {
    if (messages.length === 0) return;
    log.append(topic, messages);
    shared.published.emit(topic);
  }

  function deadLetter(topic: string, stored: StoredMessage): void {
    publishNow(`${topic}${DLQ_SUFFIX}`, [{ id: stored.id, key: stored.key, value: JSON.parse(stored.value) as unknown }]);
  }

  function join(topic: string, group: string, workers: (ctx: ConsumerContext) => Promise<void>[]): Subscription {
    if (closed) throw new Error('local bus: closed');
    const partitions = log.ensureTopic(topic);
    log.join(group, topic);
    const stateKey = `${group}\u0000${topic}`;
    const state = shared.groups.get(stateKey) ?? new GroupState(partitions);
    shared.groups.set(stateKey, state);
    const member = new Member();
    shared.published.on(topic, member.wake);
    state.add(member);
    const ctx: ConsumerContext = {
      log, topic, group, member, state, pollMs, retryBackoffMs, onError,
      deadLetter: (stored) => deadLetter(topic, stored),
    };
    const running = Promise.all(workers(ctx));
    let stopping: Promise<void> | undefined;
    const subscription: Subscription = {
      stop() {
        stopping ??= (async () => {
          member.stop();
          await running;
          shared.published.off(topic, member.wake);
          state.remove(member);
          if (state.size === 0) shared.groups.delete(stateKey);
          subscriptions.delete(subscription);
        })();
        return stopping;
      },
    };
    subscriptions.add(subscription);
    return subscription;
  }

  return {
    /*
     * A write the disk cannot take (full, failing) wrote nothing: it is tried
     * again, as the Kafka adapter resends while the broker is out of reach,
     * so that what callers publish without an outbox of their own (every
     * request's outcome) survives until space is freed.
     */
    async publish<T>(topic: string, messages: OutgoingMessage<T>[]) {
      if (messages.length === 0) return;
      let held = 0;
      try {
        await publishUntil(() => log.appendGrouped(topic, messages), Date.now() + publishTimeoutMs, (error) => !closed && isUnreachableDependency(error), (error) => {
          // Each retry repeats its inserts: a busy API on a full disk would spend its CPU on them, so only so many wait.
          if (held > 0) return;
          if (retrying + messages.length > MAX_RETRYING) throw error;
          held = messages.length;
          retrying += held;
        });
      } finally {
        retrying -= held;
      }
      shared.published.emit(topic);
    },

    async subscribe<T>(options: SubscribeOptions<T>) {
      const concurrency = Math.max(1, options.concurrency ?? 1);
      const maxAttempts = Math.max(1, options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS);
      return join(options.topic, options.group, (ctx) =>
        Array.from({ length: concurrency }, () => runMessageWorker(ctx, options.handler, maxAttempts)));
    },

    async subscribeBatch<T>(options: BatchSubscribeOptions<T>) {
      const maxBatch = Math.max(1, options.maxBatch);
      return join(options.topic, options.group, (ctx) => [runBatchWorker(ctx, options.handler, maxBatch, options.maxWaitMs)]);
    },

    async lag(topic: string, group: string) {
      return log.lag(topic, group);
    },

    async ping() {
      db.prepare('SELECT 1').get();
    },

    async close() {
      closed = true;
      await Promise.all([...subscriptions].map((subscription) => subscription.stop()));
    },
  };
}
