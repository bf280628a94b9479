import { randomUUID } from 'node:crypto';
import { STARTED, type BookRecord, type ChapterRecord, type WaitingReason } from '../store/records.ts';
import type { AudiobookSettings } from '../config.ts';
import type { ApiWorkProbe } from '../api-work.ts';
import { failAttempt, settleRefund } from '../attempts.ts';
import { dispatchChapter, publishChapter, recoverCharging, type DispatchDeps } from './dispatch.ts';
import { hasChapterInFlight, lastTurnByAccount, nextChapter, turnOrder, type TurnCandidate } from './turns.ts';
import { settleBook } from './settle.ts';

/**
 * The audiobook scheduler (pipelines role). One scheduler of the fleet acts
 * at a time (a lease in the store). Each tick it:
 * 1. fails attempts that made no progress for the stall time (refunded) and
 *    settles refunds and charges a crash left half done;
 * 2. when API work is waiting, dispatches nothing (`gpu_busy`);
 * 3. otherwise fills the free render slots: chapters paused for API work
 *    first (they are paid), then one chapter per book in fair turns;
 * 4. writes each started book's waiting reason and ends finished books.
 */
export interface SchedulerDeps extends DispatchDeps {
  apiWork: ApiWorkProbe;
  settings: AudiobookSettings;
}

/** Books with chapters owing a refund are swept this often (refunds normally settle at once). */
const REFUND_SWEEP_MS = 60_000;
const LEASE_NAME = 'scheduler';

export function createScheduler(deps: SchedulerDeps) {
  const { store, settings, logger } = deps;
  const owner = `abk_sched_${randomUUID()}`;
  let lastSweep = 0;
  const attemptDeps = { store, billing: deps.billing, logger, retryMs: settings.retryMs };

  async function sweepRefunds(): Promise<void> {
    for (const chapter of await store.chaptersInStatus(['pending', 'failed', 'cancelled', 'rendering'])) {
      if (chapter.refundDue) await settleRefund(deps, chapter);
    }
  }

  /** Stalled attempts fail; `charging` left behind by a crash is settled. Returns the chapters still in flight. */
  async function checkInFlight(now: number): Promise<ChapterRecord[]> {
    const alive: ChapterRecord[] = [];
    for (const chapter of await store.chaptersInStatus(['rendering'])) {
      const idle = now - Date.parse(chapter.lastProgressAt ?? chapter.createdAt);
      if (chapter.dispatch === 'charging' && idle > settings.chargeRecoveryMs) {
        const book = await store.getBook(chapter.bookId);
        await recoverCharging(deps, chapter, book?.engine ?? 'v4');
        continue;
      }
      if ((chapter.dispatch === 'queued' || chapter.dispatch === 'running') && idle > settings.stallMs) {
        const minutes = Math.round(settings.stallMs / 60_000);
        const failed = await failAttempt(attemptDeps, chapter, `no progress for ${minutes} minutes`, {
          status: ['rendering'], attempt: chapter.attempt, dispatchSeq: chapter.dispatchSeq, dispatch: [chapter.dispatch],
        });
        if (failed) continue;
      }
      alive.push(chapter);
    }
    return alive;
  }

  async function setWaiting(book: BookRecord, reason: WaitingReason | null, extra: Partial<BookRecord> = {}): Promise<void> {
    if (book.waitingReason === reason && Object.keys(extra).length === 0) return;
    await store.updateBook(book.id, { waitingReason: reason, ...extra }, { status: STARTED });
  }

  async function tick(): Promise<void> {
    const now = Date.now();
    const nowIso = new Date(now).toISOString();
    if (!(await store.takeLease(LEASE_NAME, owner, new Date(now + Math.max(5000, settings.tickMs * 5)).toISOString(), nowIso))) return;
    if (now - lastSweep > REFUND_SWEEP_MS) {
      lastSweep = now;
      await sweepRefunds();
    }
    const inFlight = await checkInFlight(now);
    const busy = await deps.apiWork.waiting();
    let free = settings.renderSlots - inFlight.filter((c) => c.dispatch !== 'paused').length;
    if (!busy) {
      for (const paused of inFlight.filter((c) => c.dispatch === 'paused')) {
        if (free <= 0) break;
        if (await publishChapter(deps, paused)) free--;
      }
    }

    const books = await store.booksInStatus(STARTED);
    const candidates: TurnCandidate[] = [];
    const reasons = new Map<string, WaitingReason | null>();
    for (const book of books) {
      const chapters = await store.listChapters(book.id);
      for (const c of chapters) if (c.refundDue) await settleRefund(deps, c);
      const paused = chapters.some((c) => c.status === 'rendering' && c.dispatch === 'paused');
      if (hasChapterInFlight(chapters)) {
        reasons.set(book.id, paused && (busy || free <= 0) ? (busy ? 'gpu_busy' : 'queue_full') : null);
        continue;
      }
      const next = nextChapter(chapters, nowIso);
      if (!next) {
        if (await settleBook(deps, book)) continue;
        reasons.set(book.id, null);
        continue;
      }
      if (book.quotaRetryAt && book.quotaRetryAt > nowIso) {
        reasons.set(book.id, 'quota');
        continue;
      }
      candidates.push({ book, chapter: next });
    }

    const turns = lastTurnByAccount(books);
    for (const { book, chapter } of turnOrder(candidates, turns)) {
      if (busy) {
        reasons.set(book.id, 'gpu_busy');
        continue;
      }
      if (free <= 0) {
        reasons.set(book.id, 'queue_full');
        continue;
      }
      const result = await dispatchChapter(deps, book, chapter, (characters) => deps.billing.priceCharacters({ characters, engine: book.engine, aiRefine: false }));
      if (result.kind === 'dispatched') {
        free--;
        turns.set(book.accountId, nowIso);
        reasons.delete(book.id);
      } else if (result.kind === 'quota') {
        logger.info('audiobook waits for its plan', { bookId: book.id, chapter: chapter.index, reason: result.reason });
        await setWaiting(book, 'quota', { quotaRetryAt: new Date(now + settings.quotaRetryMs).toISOString(), error: result.reason });
        reasons.delete(book.id);
      }
    }
    for (const book of books) {
      if (reasons.has(book.id)) await setWaiting(book, reasons.get(book.id)!, book.waitingReason === 'quota' && reasons.get(book.id) !== 'quota' ? { error: null } : {});
    }
  }

  return { tick, owner };
}

/** Runs the scheduler every `tickMs` in the pipelines role; the stop function waits for a tick in progress. */
export function runScheduler(deps: SchedulerDeps): () => Promise<void> {
  const scheduler = createScheduler(deps);
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | null = null;
  const loop = () => {
    running = scheduler.tick()
      .catch((err: unknown) => deps.logger.error('audiobook scheduler tick failed', { err: err as Error }))
      .finally(() => {
        if (!stopped) timer = setTimeout(loop, deps.settings.tickMs);
      });
  };
  loop();
  return async () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    await running;
  };
}
