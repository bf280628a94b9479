/**
 * Whether an error means a store or broker could not be reached or dropped
 * the connection (MongoDB, ClickHouse, Kafka, Redis, any socket), or could
 * not take a write because its disk is full or failing (the embedded file,
 * the audio directory): the request may well succeed if sent again once it
 * is back, so the API answers 503 with Retry-After instead of a 500 that
 * reads as a bug, and the bus retries a delivery that failed this way
 * without using up the message's attempts (core/adapters/bus/retry.ts).
 * Recognised by shape, so that core needs none of the drivers: Node's socket
 * and file-system error codes, SQLite's result codes, the MongoDB driver's
 * network error names and retry labels (a bulk write copies its cause's
 * labels), kafkajs' connection errors; the causes are followed a few levels
 * down.
 */
/** Retry-After of a 503 answered because a store (or the counters store behind an Idempotency-Key) could not be reached. */
export const UNREACHABLE_RETRY_SECONDS = 5;

const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/** A disk that is full (or over quota), and SQLite's "database or disk is full" and disk I/O errors (SQLITE_IOERR_WRITE, ...). */
const STORAGE_CODES = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL']);
const isStorageCode = (code: string) => STORAGE_CODES.has(code) || code === 'SQLITE_IOERR' || code.startsWith('SQLITE_IOERR_');
const NAMES = new Set([
  'MongoServerSelectionError', 'MongoNetworkError', 'MongoNetworkTimeoutError', 'MongoPoolClearedError',
  'KafkaJSConnectionError', 'KafkaJSConnectionClosedError', 'KafkaJSRequestTimeoutError',
]);
const LABELS = ['ResetPool', 'PoolRequestedRetry', 'RetryableWriteError'];

export function isUnreachableDependency(error: unknown): boolean {
  let err = error as { name?: unknown; code?: unknown; cause?: unknown; hasErrorLabel?: (label: string) => boolean } | null | undefined;
  for (let depth = 0; err && typeof err === 'object' && depth < 4; depth++) {
    if (typeof err.code === 'string' && (SOCKET_CODES.has(err.code) || isStorageCode(err.code))) return true;
    if (typeof err.name === 'string' && NAMES.has(err.name)) return true;
    if (typeof err.hasErrorLabel === 'function' && LABELS.some((label) => err!.hasErrorLabel!(label))) return true;
    err = err.cause as typeof err;
  }
  return false;
}
