import { createLogger, type Logger } from '../../logger.ts';
import { isUnreachableDependency } from '../../unreachable.ts';

/** Retry and dead-letter rules shared by both bus adapters, so they fail the same way. */

export type BusErrorReporter = (error: unknown, context: { topic: string; group: string; ids: string[]; attempt: number }) => void;

/** Deliveries of one message before it goes to the dead-letter topic, when the subscriber does not say. */
export const DEFAULT_MAX_ATTEMPTS = 5;
export const DLQ_SUFFIX = '.dlq';
const MAX_BACKOFF_MS = 30_000;

/**
 * Whether a failed delivery uses up one of the message's `maxAttempts`. A
 * store or broker out of reach, or a disk that cannot take the write
 * (`isUnreachableDependency`), says nothing about the message: it is retried,
 * backing off up to 30 s, until the dependency is back, and never
 * dead-lettered for it. A ledger entry whose MongoDB was out of reach for
 * longer than five attempts take (each waits out the driver's 30-s server
 * selection) used to end in `ledger.entries.dlq`, missing from the ledger.
 */
export function usesAnAttempt(error: unknown): boolean {
  return !isUnreachableDependency(error);
}

/**
 * A publish of either adapter while its store cannot take it (the broker out
 * of reach, the file's disk full): `send` is repeated 250 ms later, then
 * doubling up to 2 s, until it succeeds, fails in a way `retryable` refuses,
 * or the next try would start after `deadline`. `onWait` is told before each
 * wait and may refuse it by throwing.
 */
export async function publishUntil(send: () => Promise<void>, deadline: number, retryable: (error: unknown) => boolean, onWait: (error: unknown) => void = () => {}): Promise<void> {
  for (let wait = 250; ; wait = Math.min(wait * 2, 2000)) {
    try {
      return await send();
    } catch (error) {
      if (!retryable(error) || Date.now() + wait > deadline) throw error;
      onWait(error);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/** Delay before retry number `attempt + 1`: doubling from `base`, capped at 30 s. */
export function backoffMs(base: number, attempt: number): number {
  return Math.min(MAX_BACKOFF_MS, base * 2 ** (attempt - 1));
}

/** Message ids named in one log line; a batch can hold tens of thousands. */
export const LOGGED_IDS = 5;

/**
 * Reports each failed delivery as one structured log line (the platform
 * passes its own logger): how many messages, and the first few ids. Every id
 * of a 40,000-message batch made one line of about 1.6 MB.
 */
export function loggerReporter(adapter: string, logger: Logger = createLogger('info')): BusErrorReporter {
  return (error, { topic, group, ids, attempt }) => {
    // A store out of reach (ClickHouse restarting) is the store's news, not the message's: one short line at
    // attempts 1, 2, 4, 8, … without the stack, where each retry of each subscription logged a full trace.
    if (isUnreachableDependency(error)) {
      if ((attempt & (attempt - 1)) !== 0) return;
      logger.warn('bus delivery waits: a store it writes to cannot be reached; retried with backoff until it answers', {
        adapter, topic, group, attempt, count: ids.length, messages: ids.slice(0, LOGGED_IDS), reason: error instanceof Error ? error.message : String(error),
      });
      return;
    }
    logger.warn('bus delivery failed; it will be retried or dead-lettered', {
      adapter, topic, group, attempt, count: ids.length, messages: ids.slice(0, LOGGED_IDS),
      err: error instanceof Error ? error : new Error(String(error)),
    });
  };
}
