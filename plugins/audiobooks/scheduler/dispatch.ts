import type { BillingService, Charge } from '../../../core/billing/service.ts';
import type { Documents } from '../../../core/ports/documents.ts';
import type { Publisher } from '../../../core/services.ts';
import type { Logger } from '../../../core/logger.ts';
import { TOPICS } from '../../../core/ports/bus.ts';
import { isRefusal } from '../../../core/errors.ts';
import { AUDIOBOOK_CHARGE_ROUTE } from '../../../core/billing/ledger-routes.ts';
import type { AudiobookStore } from '../store/port.ts';
import { STARTED, type BookRecord, type ChapterRecord } from '../store/records.ts';
import type { ChapterMessage } from '../render/worker.ts';

/**
 * Starting a chapter's render: take it (pending to `rendering`, dispatch
 * `charging`), charge it (SPEC: each chapter is billed when it starts
 * rendering), record the charge, publish it on `audiobook.chapters`. A
 * refusal of the payer's plans puts it back and the book waits on `quota`.
 * The charge carries a request id derived from the chapter and attempt, so a
 * scheduler that died between charging and recording is settled from the
 * ledger (`recoverCharging`).
 */
export interface DispatchDeps {
  store: AudiobookStore;
  billing: BillingService;
  documents: Documents;
  publisher: Publisher;
  logger: Logger;
}

export type DispatchResult = { kind: 'dispatched' } | { kind: 'quota'; reason: string } | { kind: 'skipped' };

export const chargeRequestId = (c: Pick<ChapterRecord, 'bookId' | 'index'>, attempt: number) => `abk_${c.bookId}_${c.index}_a${attempt}`;

export function chapterMessage(c: ChapterRecord): { id: string; key: string; value: ChapterMessage } {
  return {
    id: `abk:${c.bookId}:${c.index}:${c.attempt}:${c.dispatchSeq}`,
    key: c.bookId,
    value: { bookId: c.bookId, index: c.index, attempt: c.attempt, seq: c.dispatchSeq },
  };
}

/** Publishes a chapter charged and taken (`paused` or recovered): a new dispatch number, then the message. */
export async function publishChapter(deps: DispatchDeps, chapter: ChapterRecord): Promise<boolean> {
  const now = new Date().toISOString();
  const queued = await deps.store.updateChapter(chapter.bookId, chapter.index,
    { dispatch: 'queued', dispatchSeq: chapter.dispatchSeq + 1, lastProgressAt: now },
    { status: ['rendering'], attempt: chapter.attempt, dispatchSeq: chapter.dispatchSeq });
  if (!queued) return false;
  try {
    await deps.publisher.publish(TOPICS.chapters, [chapterMessage(queued)]);
  } catch (err) {
    // Not on the bus: paused chapters are published again at the next turn.
    await deps.store.updateChapter(queued.bookId, queued.index, { dispatch: 'paused' }, { attempt: queued.attempt, dispatchSeq: queued.dispatchSeq });
    throw err;
  }
  return true;
}

/**
 * Takes the chapter (pending → rendering), charges it, and publishes it.
 * The price is computed from the chapter as taken: an append that landed
 * after the scheduler read the chapter, and before the take closed it to
 * appends, is rendered and so is paid for.
 */
export async function dispatchChapter(deps: DispatchDeps, book: BookRecord, chapter: ChapterRecord, price: (characters: number) => number): Promise<DispatchResult> {
  const { store } = deps;
  const now = new Date().toISOString();
  const attempt = chapter.attempt + 1;
  const taken = await store.updateChapter(book.id, chapter.index,
    { status: 'rendering', dispatch: 'charging', attempt, lastProgressAt: now, retryAt: null },
    { status: ['pending'], attempt: chapter.attempt });
  if (!taken) return { kind: 'skipped' };
  const putBack = (status: 'pending' | 'cancelled') =>
    store.updateChapter(book.id, chapter.index, { status, dispatch: null, attempt: chapter.attempt }, { attempt, dispatch: ['charging'] });

  // A cancel that came between reading the book and taking the chapter wins: nothing is charged.
  const fresh = await store.getBook(book.id);
  if (!fresh || !STARTED.includes(fresh.status)) {
    await putBack(fresh?.status === 'cancelled' ? 'cancelled' : 'pending');
    return { kind: 'skipped' };
  }
  let charge: Charge;
  try {
    charge = await deps.billing.charge({
      payer: { accountId: book.accountId, keyId: fresh.payerKeyId, grantId: fresh.payerGrantId },
      engine: book.engine, tokens: price(taken.characters), route: AUDIOBOOK_CHARGE_ROUTE, requestId: chargeRequestId(chapter, attempt),
    });
  } catch (err) {
    await putBack('pending');
    if (isRefusal(err)) return { kind: 'quota', reason: (err as Error).message };
    throw err;
  }
  const recorded = await store.updateChapter(book.id, chapter.index, { charge, dispatch: 'paused' }, { attempt, dispatch: ['charging'] });
  if (!recorded) {
    // Someone settled the chapter meanwhile (a charge recovery): the money goes back.
    await deps.billing.refund(charge);
    return { kind: 'skipped' };
  }
  await store.updateBook(book.id, { status: 'rendering', lastTurnAt: now, waitingReason: null, quotaRetryAt: null, error: null }, { status: STARTED });
  await publishChapter(deps, recorded);
  return { kind: 'dispatched' };
}

/**
 * A chapter left `charging` (the scheduler died between charging and
 * recording): the ledger says whether the charge was made. Found, it is
 * recorded and the chapter goes on; not found, the chapter is put back.
 */
export async function recoverCharging(deps: DispatchDeps, chapter: ChapterRecord, engine: string): Promise<void> {
  const requestId = chargeRequestId(chapter, chapter.attempt);
  let found: Charge | null = null;
  for (const grant of await deps.documents.grants.listByAccount(chapter.accountId)) {
    const entry = (await deps.documents.ledger.listByGrant(grant.id)).find((e) => e.kind === 'charge' && e.requestId === requestId);
    if (entry) {
      found = {
        id: entry.chargeId, grantId: entry.grantId, accountId: entry.accountId, keyId: entry.keyId, tokens: entry.tokens, engine,
        route: entry.route, requestId, dayKey: entry.dayKey ?? '', weekKey: entry.weekKey ?? '', at: entry.at,
      };
      break;
    }
  }
  const when = { attempt: chapter.attempt, dispatch: ['charging' as const] };
  if (found) {
    await deps.store.updateChapter(chapter.bookId, chapter.index, { charge: found, dispatch: 'paused' }, when);
  } else {
    await deps.store.updateChapter(chapter.bookId, chapter.index, { status: 'pending', dispatch: null, attempt: chapter.attempt - 1 }, when);
  }
  deps.logger.warn('audiobook chapter left charging was settled from the ledger', { bookId: chapter.bookId, chapter: chapter.index, charged: found !== null });
}
