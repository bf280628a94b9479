import type { Logger } from '../../../core/logger.ts';
import type { AudiobookStore } from '../store/port.ts';
import { STARTED, type BookRecord, type BookStatus } from '../store/records.ts';

/** Chapter states after which nothing more happens to a chapter until the next start. */
const SETTLED = new Set(['completed', 'failed', 'cancelled']);

/**
 * Ends a started book once every chapter is settled: `completed` when all
 * chapters are, `partial` when some failed three times, `failed` when none
 * completed. Conditional on the book's version, so a chapter added meanwhile
 * keeps the book open. A notification is written for the account.
 */
export async function settleBook(deps: { store: AudiobookStore; logger: Logger }, book: BookRecord): Promise<BookStatus | null> {
  if (!STARTED.includes(book.status)) return null;
  const chapters = await deps.store.listChapters(book.id);
  if (chapters.length === 0 || !chapters.every((c) => SETTLED.has(c.status))) return null;
  const completed = chapters.filter((c) => c.status === 'completed');
  const failed = chapters.filter((c) => c.status !== 'completed');
  const status: BookStatus = failed.length === 0 ? 'completed' : completed.length > 0 ? 'partial' : 'failed';
  const error = failed.length === 0 ? null : `Chapter${failed.length > 1 ? 's' : ''} ${failed.map((c) => c.index).join(', ')} could not be rendered. Start the book again to redo only ${failed.length > 1 ? 'those' : 'that one'}.`;
  const now = new Date().toISOString();
  const done = await deps.store.updateBook(book.id, { status, waitingReason: null, error, completedAt: now, quotaRetryAt: null }, { status: STARTED, version: book.version });
  if (!done) return null;
  const message = status === 'completed'
    ? `"${book.title}" is ready: ${completed.length} chapter${completed.length > 1 ? 's' : ''} in your library.`
    : `"${book.title}" finished with ${completed.length} of ${chapters.length} chapters; ${error}`;
  await deps.store.addNotification({ id: `ntf_${book.id}_${book.run}`, accountId: book.accountId, kind: `audiobook.${status}` as const, message, bookId: book.id, createdAt: now });
  deps.logger.info('audiobook finished', { bookId: book.id, status, chapters: chapters.length, completed: completed.length });
  return status;
}
