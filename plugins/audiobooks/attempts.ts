import type { BillingService } from '../../core/billing/service.ts';
import type { Logger } from '../../core/logger.ts';
import type { AudiobookStore, ChapterCondition } from './store/port.ts';
import { STARTED, type ChapterRecord } from './store/records.ts';

/**
 * A chapter's render attempt that failed (the engine failed, or it made no
 * progress for too long): its charge is refunded, and the chapter is rendered
 * again automatically a few minutes later, at most twice; the third failure
 * is final. The refund goes through `refundDue` (an outbox of one) so that a
 * crash between the state change and the refund delays the refund, never
 * loses it: `settleRefund` finishes it, and the scheduler sweeps for any left.
 */
export const MAX_FAILURES = 3;

export interface AttemptDeps {
  store: AudiobookStore;
  billing: BillingService;
  logger: Logger;
  retryMs: number;
}

export async function settleRefund(deps: Pick<AttemptDeps, 'store' | 'billing'>, chapter: ChapterRecord): Promise<void> {
  if (!chapter.refundDue) return;
  // Idempotent per charge: a repeat after a crash returns nothing twice.
  await deps.billing.refund(chapter.refundDue);
  await deps.store.updateChapter(chapter.bookId, chapter.index, { refundDue: null }, { attempt: chapter.attempt });
}

/**
 * Fails the attempt when `when` still holds; false when the chapter had moved on (another party settled it).
 * `outage`: the attempt failed because a store could not be reached or a disk was full, which says nothing
 * of the chapter: it is rendered again as usual but the failure does not count towards the final third, so
 * a long outage delays a book without failing its chapters.
 */
export async function failAttempt(deps: AttemptDeps, chapter: ChapterRecord, reason: string, when: ChapterCondition, outage = false): Promise<boolean> {
  const failures = chapter.failures + (outage ? 0 : 1);
  const final = failures >= MAX_FAILURES;
  const book = await deps.store.getBook(chapter.bookId);
  // A cancelled book's chapter is not retried: it waits, cancelled, for the next start.
  const stopped = !book || !STARTED.includes(book.status);
  const status = final ? 'failed' : stopped ? 'cancelled' : 'pending';
  const retryAt = status === 'pending' ? new Date(Date.now() + deps.retryMs).toISOString() : null;
  const error = final
    ? `Rendering failed ${failures} times; the last time: ${reason}. Start the book again to retry this chapter.`
    : `Render attempt ${chapter.attempt} failed: ${reason}.${status === 'pending' ? ' It is rendered again automatically.' : ''}`;
  const updated = await deps.store.updateChapter(chapter.bookId, chapter.index, {
    status, dispatch: null, leaseOwner: null, leaseUntil: null, charge: null, refundDue: chapter.charge, failures, retryAt, error,
  }, when);
  if (!updated) return false;
  deps.logger.warn('audiobook chapter attempt failed', { bookId: chapter.bookId, chapter: chapter.index, attempt: chapter.attempt, failures, final, reason });
  await settleRefund(deps, updated);
  return true;
}
