import { Kafka, Partitioners, type Consumer, type KafkaMessage, type Message } from 'kafkajs';
import type { BatchSubscribeOptions, Bus, BusMessage, OutgoingMessage, SubscribeOptions, Subscription } from '../../ports/bus.ts';
import { backoffMs, DEFAULT_MAX_ATTEMPTS, DLQ_SUFFIX, loggerReporter, publishUntil, usesAnAttempt, type BusErrorReporter } from './retry.ts';
import { chunkRecords, consumerGroupId, isRetriable, isTransient, kafkaLogging, PUBLISH_CHUNK_BYTES, retryRetriable } from './kafka-support.ts';
import { createLogger, type Logger, type LogLevel } from '../../logger.ts';
import { batchGatherer } from './batch-gatherer.ts';
import { perTurn } from '../../per-turn.ts';

/**
 * The production bus on Kafka (kafkajs). Offsets are committed by hand, only
 * after the handler resolves; a message that keeps failing is retried with
 * backoff in place (so later messages of its partition wait, keeping key
 * order) and then sent to `<topic>.dlq`. Values travel as JSON
 * `{ id, value, publishedAt }` under the message key. A bus group reading
 * topic T is the Kafka consumer group `<group>.<T>`.
 */

export interface KafkaBusOptions {
  brokers: string[];
  clientId: string;
  /** partitions of every topic this bus creates (and of its `.dlq`) */
  partitions: number;
  replicationFactor?: number;
  /** first retry delay, doubled on each further attempt (default 200) */
  retryBackoffMs?: number;
  /**
   * How long publish() keeps trying while the broker cannot be reached
   * (default 120 s, Kafka's own delivery.timeout.ms): a broker restart
   * delays the events published meanwhile instead of losing them.
   */
  publishTimeoutMs?: number;
  onError?: BusErrorReporter;
  /** where kafkajs's own lines go, and at which LOG_LEVEL (default: the platform's format at WARN, to stderr) */
  logging?: { logger: Logger; level: LogLevel };
}

interface Envelope {
  id: string;
  value: unknown;
  publishedAt: string;
}

/** Longest wait between heartbeats while a retry backs off, well inside the default 30 s session timeout. */
const HEARTBEAT_SLICE_MS = 3000;

/*
 * Fetch sizes of batch subscribers. kafkajs fetches at most 1 MB of a
 * partition at a time (about 1,500 outcome events), which would cap every
 * batch there whatever maxBatch says, and a batch is one write downstream
 * (a ClickHouse insert). 8 MB a partition, 32 MB a fetch, hold a consumer's
 * memory within bounds while letting batches reach their maxBatch.
 */
const BATCH_FETCH = { maxBytesPerPartition: 8 << 20, maxBytes: 32 << 20 };
/**
 * A member learns of a rebalance at its next heartbeat; at kafkajs' 3 s a busy
 * member kept every partition for seconds after another joined its group.
 */
const BATCH_HEARTBEAT_MS = 500;
/** Partition batches a batch subscriber takes at once: more than a topic has, so a whole fetch can join one batch. */
const BATCH_PARTITIONS_AT_ONCE = 64;

/** How long a new topic may take to get a leader on every partition. */
const TOPIC_READY_TIMEOUT_MS = 30_000;
const nextOffset = (offset: string) => (BigInt(offset) + 1n).toString();

function decode<T>(message: KafkaMessage, attempt: number): BusMessage<T> {
  const envelope = JSON.parse(message.value?.toString('utf8') ?? 'null') as Envelope;
  if (!envelope || typeof envelope.id !== 'string') throw new TypeError('kafka bus: message is not a bus envelope');
  return { id: envelope.id, key: message.key?.toString('utf8') ?? '', value: envelope.value as T, publishedAt: envelope.publishedAt, attempt };
}

export async function createKafkaBus(opts: KafkaBusOptions): Promise<Bus> {
  const { logger = createLogger('warn'), level = 'warn' } = opts.logging ?? {};
  const kafka = new Kafka({ clientId: opts.clientId, brokers: opts.brokers, ...kafkaLogging(logger, level) });
  const retryBackoffMs = opts.retryBackoffMs ?? 200;
  const publishTimeoutMs = opts.publishTimeoutMs ?? 120_000;
  let closed = false;
  const onError = opts.onError ?? loggerReporter('kafka');
  const admin = kafka.admin();
  // Idempotent producer: broker-side dedupe of retried sends, which needs one request in flight to keep order.
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
  await admin.connect();
  await producer.connect();
  const topicsReady = new Map<string, Promise<void>>();
  const subscriptions = new Set<Subscription>();

  /*
   * kafkajs's own `waitForLeaders` gives up on UNKNOWN_TOPIC_OR_PARTITION,
   * which a KRaft broker answers until its metadata cache has caught up with
   * the controller; it also skips the wait when another process created the
   * topic first. So wait here, on every partition having a leader.
   */
  async function waitForLeaders(names: string[]): Promise<void> {
    const deadline = Date.now() + TOPIC_READY_TIMEOUT_MS;
    for (;;) {
      try {
        const { topics } = await admin.fetchTopicMetadata({ topics: names });
        const led = topics.length === names.length
          && topics.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0));
        if (led) return;
      } catch (error) {
        if (!isRetriable(error) || Date.now() > deadline) throw error;
      }
      if (Date.now() > deadline) throw new Error(`kafka bus: no leader for ${names.join(', ')} after ${TOPIC_READY_TIMEOUT_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  function ensureTopic(topic: string): Promise<void> {
    let ready = topicsReady.get(topic);
    if (!ready) {
      const names = topic.endsWith(DLQ_SUFFIX) ? [topic] : [topic, `${topic}${DLQ_SUFFIX}`];
      const topics = names.map((name) => ({
        topic: name, numPartitions: opts.partitions, replicationFactor: opts.replicationFactor ?? -1,
      }));
      ready = admin.createTopics({ topics, waitForLeaders: false }).then(() => waitForLeaders(names));
      ready.catch(() => topicsReady.delete(topic));
      topicsReady.set(topic, ready);
    }
    return ready;
  }

  /*
   * The publishes of one turn leave as ONE produce request (per-turn.ts):
   * every request publishes its outcome, and with one request in flight per
   * producer each send waited its turn and cost as much as a batch. A
   * request that failed for a passing reason fails the publishes in it, and
   * each repeats its own records below; one the broker refused outright is
   * sent again publish by publish, so that only the culprit's fails.
   */
  const sendInTurn = perTurn<{ topic: string; messages: Message[] }, unknown>(async (sends) => {
    const byTopic = new Map<string, Message[]>();
    for (const { topic, messages } of sends) {
      const list = byTopic.get(topic) ?? [];
      for (const message of messages) list.push(message);
      byTopic.set(topic, list);
    }
    try {
      await producer.sendBatch({ topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) });
      return sends.map(() => null);
    } catch (error) {
      if (sends.length === 1 || isTransient(error)) throw error;
      return Promise.all(sends.map((send) => producer.send(send).then(() => null, (refused: unknown) => refused)));
    }
  });

  /*
   * kafkajs gives up on a send after about ten seconds of failed retries,
   * shorter than a broker restart. Sends are repeated here while the broker
   * is out of reach, up to publishTimeoutMs; the idempotent producer keeps a
   * repeated send that had in fact been written from being written twice.
   */
  async function publish<T>(topic: string, messages: OutgoingMessage<T>[]): Promise<void> {
    if (messages.length === 0) return;
    const publishedAt = new Date().toISOString();
    const records = messages.map((m) => ({ key: m.key, value: JSON.stringify({ id: m.id, value: m.value, publishedAt } satisfies Envelope) }));
    const deadline = Date.now() + publishTimeoutMs;
    // A single message needs no measuring (every request publishes its outcome alone).
    const chunks = records.length === 1 ? [records] : chunkRecords(records, PUBLISH_CHUNK_BYTES);
    // In order: a chunk sent is not sent again when a later one is retried.
    for (const chunk of chunks) {
      await publishUntil(async () => {
        await ensureTopic(topic);
        const refused = await sendInTurn({ topic, messages: chunk });
        if (refused) throw refused;
      }, deadline, (error) => !closed && isTransient(error));
    }
  }

  async function deadLetter(topic: string, message: KafkaMessage): Promise<void> {
    let envelope: Envelope;
    try {
      envelope = JSON.parse(message.value?.toString('utf8') ?? 'null') as Envelope;
      if (!envelope || typeof envelope.id !== 'string') throw new TypeError('not an envelope');
    } catch {
      envelope = { id: `${topic}@${message.offset}`, value: message.value?.toString('utf8') ?? null, publishedAt: new Date().toISOString() };
    }
    await publish(`${topic}${DLQ_SUFFIX}`, [{ id: envelope.id, key: message.key?.toString('utf8') ?? '', value: envelope.value }]);
  }

  /** Starts a consumer; `stopped` lets handlers abandon retries (leaving the offset uncommitted) when stop() is called. */
  async function startConsumer(topic: string, group: string, extra: { maxWaitTimeInMs?: number; heartbeatInterval?: number },
    run: (consumer: Consumer, control: { stopped: () => boolean; pause: (ms: number, heartbeat: () => Promise<void>) => Promise<boolean> }) => Promise<void>): Promise<Subscription> {
    await ensureTopic(topic);
    let stopped = false;
    const consumer = kafka.consumer({
      groupId: consumerGroupId(group, topic),
      allowAutoTopicCreation: false,
      // kafkajs restarts a crashed consumer (e.g. the coordinator was still loading) on a timer; one stopped meanwhile must stay stopped.
      retry: { restartOnFailure: async () => !stopped },
      ...extra,
    });
    const sleepers = new Set<() => void>();
    const pause = async (ms: number, heartbeat: () => Promise<void>) => {
      const end = Date.now() + ms;
      while (!stopped && Date.now() < end) {
        await new Promise<void>((resolve) => {
          const done = () => { clearTimeout(timer); sleepers.delete(done); resolve(); };
          const timer = setTimeout(done, Math.min(HEARTBEAT_SLICE_MS, end - Date.now()));
          sleepers.add(done);
        });
        if (!stopped) await heartbeat();
      }
      return !stopped;
    };
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await run(consumer, { stopped: () => stopped, pause });
    let stopping: Promise<void> | undefined;
    const subscription: Subscription = {
      stop() {
        stopping ??= (async () => {
          stopped = true;
          for (const wake of [...sleepers]) wake();
          await consumer.disconnect();
          subscriptions.delete(subscription);
        })();
        return stopping;
      },
    };
    subscriptions.add(subscription);
    return subscription;
  }

  return {
    publish,

    async subscribe<T>(options: SubscribeOptions<T>) {
      const { topic, group, handler } = options;
      const maxAttempts = Math.max(1, options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS);
      // eachBatch rather than eachMessage: its commit still goes through while stop() waits for the
      // handler in flight, where consumer.commitOffsets() is silently dropped once stopping began.
      return startConsumer(topic, group, {}, (consumer, control) => consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: Math.max(1, options.concurrency ?? 1),
        eachBatch: async ({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale }) => {
          const { partition } = batch;
          /** Handles one message until it succeeds or is dead-lettered; false when stopped first (left uncommitted). */
          const deliver = async (message: KafkaMessage): Promise<boolean> => {
            for (let attempt = 1, failures = 0; ; attempt++) {
              if (control.stopped() || !isRunning() || isStale()) return false;
              try {
                await handler(decode<T>(message, attempt));
                return true;
              } catch (error) {
                onError(error, { topic, group, ids: [`${partition}@${message.offset}`], attempt });
                if (usesAnAttempt(error) && ++failures >= maxAttempts) {
                  await deadLetter(topic, message);
                  return true;
                }
                await control.pause(backoffMs(retryBackoffMs, attempt), heartbeat);
              }
            }
          };
          // Each offset is committed after its handler resolved, in order, while the next message is handled;
          // the batch (and so stop()) ends only once every commit has landed.
          let committed: Promise<unknown> = Promise.resolve();
          try {
            for (const message of batch.messages) {
              if (!(await deliver(message))) return;
              resolveOffset(message.offset);
              const offset = nextOffset(message.offset);
              const commit = committed.then(() => commitOffsetsIfNecessary({ topics: [{ topic, partitions: [{ partition, offset }] }] }));
              commit.catch(() => {}); // awaited below; this only keeps it from counting as unhandled meanwhile
              committed = commit;
              await heartbeat();
            }
          } finally {
            await committed;
          }
        },
      }));
    },

    async subscribeBatch<T>(options: BatchSubscribeOptions<T>) {
      const { topic, group, handler } = options;
      const maxBatch = Math.max(1, options.maxBatch);
      // The last partition batch's consumer controls: any of them heartbeats for the consumer while a joined batch retries.
      let current: { heartbeat: () => Promise<void>; isRunning: () => boolean } | null = null;
      return startConsumer(topic, group, { maxWaitTimeInMs: options.maxWaitMs, heartbeatInterval: BATCH_HEARTBEAT_MS, ...BATCH_FETCH }, (consumer, control) => {
        const gatherer = batchGatherer<BusMessage<T>>({
          maxBatch,
          maxWaitMs: options.maxWaitMs,
          handle: async (messages) => {
            for (let attempt = 1; ; attempt++) {
              if (control.stopped() || (current && !current.isRunning())) return false;
              try {
                await handler(attempt === 1 ? messages : messages.map((message) => ({ ...message, attempt })));
                return true;
              } catch (error) {
                onError(error, { topic, group, ids: messages.map((m) => m.id), attempt });
                if (!(await control.pause(backoffMs(retryBackoffMs, attempt), () => current?.heartbeat() ?? Promise.resolve()))) return false;
              }
            }
          },
        });
        return consumer.run({
          autoCommit: false,
          eachBatchAutoResolve: false,
          // Every partition of a fetch at once, so that their messages can join one batch (batch-gatherer.ts).
          partitionsConsumedConcurrently: BATCH_PARTITIONS_AT_ONCE,
          eachBatch: ({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale }) => gatherer.delivery(async () => {
            current = { heartbeat, isRunning };
            // Messages on the broker past this fetch: the group is behind, so its batches need not wait to fill.
            const lagBehind = !batch.isEmpty() && BigInt(batch.offsetLag()) > 0n;
            for (let start = 0; start < batch.messages.length; start += maxBatch) {
              const chunk = batch.messages.slice(start, start + maxBatch);
              // A message that is not a bus envelope would fail every retry of its batch: dead-letter it alone.
              const decoded: BusMessage<T>[] = [];
              for (const message of chunk) {
                try {
                  decoded.push(decode<T>(message, 1));
                } catch {
                  await deadLetter(topic, message);
                }
              }
              if (control.stopped() || !isRunning() || isStale()) return;
              // Committed only once the batch holding this chunk was handled; otherwise it is delivered again.
              const backlog = lagBehind || start + maxBatch < batch.messages.length;
              if (!(await gatherer.add(decoded, { backlog }))) return;
              const last = chunk[chunk.length - 1]!;
              resolveOffset(last.offset);
              await commitOffsetsIfNecessary({ topics: [{ topic, partitions: [{ partition: batch.partition, offset: nextOffset(last.offset) }] }] });
              await heartbeat();
            }
          }),
        });
      });
    },

    async lag(topic: string, group: string) {
      if (!(await admin.listTopics()).includes(topic)) return 0;
      const [ends, committed] = await Promise.all([
        retryRetriable(() => admin.fetchTopicOffsets(topic)),
        // The group coordinator answers NOT_COORDINATOR while it loads its offsets partition; kafkajs' admin does not retry that.
        retryRetriable(() => admin.fetchOffsets({ groupId: consumerGroupId(group, topic), topics: [topic] })),
      ]);
      const committedByPartition = new Map((committed[0]?.partitions ?? []).map((p) => [p.partition, BigInt(p.offset)]));
      let lag = 0n;
      for (const end of ends) {
        const low = BigInt(end.low);
        const done = committedByPartition.get(end.partition) ?? -1n;
        const from = done < low ? low : done;
        if (BigInt(end.high) > from) lag += BigInt(end.high) - from;
      }
      return Number(lag);
    },

    async ping() {
      await admin.describeCluster();
    },

    async close() {
      closed = true;
      await Promise.all([...subscriptions].map((subscription) => subscription.stop()));
      await producer.disconnect();
      await admin.disconnect();
    },
  };
}
