import { logLevel as KafkaLogLevel, type logCreator } from 'kafkajs';
import type { Logger, LogLevel } from '../../logger.ts';

/** What the Kafka bus (kafka.ts) needs around kafkajs: group naming, logging and retries of retriable errors. */

/** How long an admin request is retried while the broker answers with a retriable error. */
const RETRIABLE_FOR_MS = 15_000;

/*
 * One Kafka consumer group per (bus group, topic). kafkajs's assigners give
 * every member partitions of every topic any member subscribed to, so a bus
 * group that reads two topics (the usage aggregator) or a topic and its
 * `.dlq` would leave partitions with members that never fetch them.
 */
export const consumerGroupId = (group: string, topic: string) => `${group}.${topic}`;

/**
 * kafkajs's own threshold for the platform's LOG_LEVEL: WARN as before (its
 * INFO lines are connection and group chatter), DEBUG only when the platform
 * logs debug, ERROR and nothing for `error` and `silent`.
 */
export function kafkaLogLevel(level: LogLevel): KafkaLogLevel {
  switch (level) {
    case 'debug': return KafkaLogLevel.DEBUG;
    case 'error': return KafkaLogLevel.ERROR;
    case 'silent': return KafkaLogLevel.NOTHING;
    default: return KafkaLogLevel.WARN;
  }
}

const METHODS: Partial<Record<KafkaLogLevel, 'error' | 'warn' | 'info' | 'debug'>> = {
  [KafkaLogLevel.ERROR]: 'error', [KafkaLogLevel.WARN]: 'warn', [KafkaLogLevel.INFO]: 'info', [KafkaLogLevel.DEBUG]: 'debug',
};

/*
 * kafkajs's lines go through the platform logger: the same JSON shape as
 * every other line ({"t","level","msg",…}, `logger: "kafkajs"` and its
 * namespace added), and LOG_LEVEL applies. kafkajs logs every error response
 * at ERROR, including the ones it or this adapter retries (a rebalance, a
 * topic whose leader is being elected, a topic another process created
 * first). Those are left out; whatever is not retried reaches the caller as
 * an error anyway.
 */
export function platformLogCreator(logger: Logger): logCreator {
  return () => ({ namespace, level, log }) => {
    // Its own time, message and label give way to the platform's `t`, `msg` and `level`.
    const { message, timestamp: _timestamp, logger: _logger, level: _level, t: _t, msg: _msg, ...fields } = log;
    if (namespace === 'Connection' && String(message).startsWith('Response')) return;
    logger[METHODS[level] ?? 'info'](String(message), { logger: 'kafkajs', namespace, ...fields });
  };
}

/** The logging options of `new Kafka(…)` in a process that logs through `logger` at `level` (LOG_LEVEL). */
export function kafkaLogging(logger: Logger, level: LogLevel): { logLevel: KafkaLogLevel; logCreator: logCreator } {
  return { logLevel: kafkaLogLevel(level), logCreator: platformLogCreator(logger) };
}


export const isRetriable = (error: unknown) => (error as { retriable?: boolean }).retriable === true;

/** Runs `call` again while it fails with an error Kafka marks retriable, for at most RETRIABLE_FOR_MS. */
export async function retryRetriable<T>(call: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + RETRIABLE_FOR_MS;
  for (let wait = 50; ; wait = Math.min(wait * 2, 1000)) {
    try {
      return await call();
    } catch (error) {
      if (!isRetriable(error) || Date.now() + wait > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/** kafkajs errors that say the broker was out of reach or busy, whatever their `retriable` flag. */
const UNREACHABLE = new Set([
  'KafkaJSConnectionError', 'KafkaJSConnectionClosedError', 'KafkaJSRequestTimeoutError', 'KafkaJSBrokerNotFound',
  'KafkaJSNoBrokerAvailableError', 'KafkaJSMetadataNotLoaded', 'KafkaJSTopicMetadataNotLoaded', 'KafkaJSLockTimeout',
]);

/**
 * Whether a failed publish may succeed later: the broker was unreachable or
 * busy (directly, or as the cause of kafkajs giving up after its own
 * retries), rather than the request refused for good (a message too large,
 * a topic that cannot be created).
 */
export function isTransient(error: unknown): boolean {
  for (let e = error as { retriable?: boolean; name?: string; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (e.retriable === true || UNREACHABLE.has(e.name ?? '')) return true;
  }
  return false;
}

/**
 * Most bytes of keys and values in one produce request of a publish. A
 * broker refuses a record batch over `message.max.bytes` (1 MB by default)
 * for good, and kafkajs sends each partition's share of a request as one
 * batch: a publish of many messages (the usage aggregator dead-letters a
 * whole batch's malformed events at once) failed on every retry, and the
 * embedded bus took it. A larger publish goes out in chunks of this size,
 * in order; one message over the broker's limit is still refused.
 */
export const PUBLISH_CHUNK_BYTES = 512 * 1024;

/** Consecutive runs of records, each under `maxBytes` of keys and values unless a single record is larger. */
export function chunkRecords(records: Array<{ key: string; value: string }>, maxBytes: number): Array<Array<{ key: string; value: string }>> {
  const chunks: Array<Array<{ key: string; value: string }>> = [];
  let chunk: Array<{ key: string; value: string }> = [];
  let bytes = 0;
  for (const record of records) {
    const size = Buffer.byteLength(record.key) + Buffer.byteLength(record.value);
    if (chunk.length > 0 && bytes + size > maxBytes) {
      chunks.push(chunk);
      chunk = [];
      bytes = 0;
    }
    chunk.push(record);
    bytes += size;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}
