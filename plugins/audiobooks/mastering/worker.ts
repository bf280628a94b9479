import { randomUUID } from 'node:crypto';
import type { Blobs } from '../../../core/ports/blobs.ts';
import type { Logger } from '../../../core/logger.ts';
import type { AudiobookStore } from '../store/port.ts';
import type { BookRecord, ChapterRecord } from '../store/records.ts';
import { chapterKey, partKey } from '../render/part.ts';
import { settleBook } from '../scheduler/settle.ts';
import { chapterSource, chapterWav } from './assemble.ts';
import { masterMp3, type MasterResult, type MasterSource, type Id3Tags, type Mp3Sink } from './master.ts';
import { isUnreachableDependency } from '../../../core/unreachable.ts';

/**
 * Mastering (pipelines role): takes rendered chapters one at a time, masters
 * each into its MP3 and delivers it (the chapter's link, the account's
 * library, the book's end). A failure is retried after growing waits
 * (`AUDIOBOOK_MASTER_RETRY_SECONDS`, about an hour in all); after the last,
 * the chapter is delivered as WAV (`audioFormat: wav`). Several pipelines
 * processes share the work through a lease on each chapter.
 */
export type MasterFn = (source: MasterSource, tags: Id3Tags, sink: Mp3Sink, signal?: AbortSignal) => Promise<MasterResult>;

export interface MasteringDeps {
  store: AudiobookStore;
  blobs: Blobs;
  logger: Logger;
  /** waits between attempts, ms; WAV after the last */
  retryMs: number[];
  /** the mastering itself (tests may replace it to make it fail) */
  master?: MasterFn;
  /** how long one mastering may hold a chapter before another process may take it over */
  leaseMs?: number;
}

/** A chapter's mastering lease, renewed while ffmpeg runs; a process that died gives it up this soon. */
const DEFAULT_LEASE_MS = 120_000;

export function createMasteringWorker(deps: MasteringDeps) {
  const { store, blobs, logger } = deps;
  const owner = `abk_master_${randomUUID()}`;
  const master = deps.master ?? ((source, tags, sink, signal) => masterMp3(source, tags, sink, { signal }));
  const leaseMs = deps.leaseMs ?? DEFAULT_LEASE_MS;

  async function deliver(book: BookRecord, chapter: ChapterRecord, audioKey: string, audioFormat: 'mp3' | 'wav'): Promise<void> {
    const completedAt = new Date().toISOString();
    // Library first (idempotent, same key whoever finishes): a crash after it leaves nothing half delivered.
    await store.addToLibrary({
      id: `${book.id}:${chapter.index}`, accountId: book.accountId, bookId: book.id, bookTitle: book.title, author: book.author,
      chapterIndex: chapter.index, title: chapter.title, audioKey, audioFormat, durationSeconds: chapter.durationSeconds ?? 0, completedAt,
    });
    const done = await store.updateChapter(book.id, chapter.index, {
      status: 'completed', audioKey, audioFormat, completedAt, leaseOwner: null, leaseUntil: null, masterRetryAt: null, error: null,
    }, { status: ['mastering'], leaseOwner: owner });
    if (!done) return;
    for (let p = 0; p < chapter.parts.length; p++) await blobs.delete(partKey(book.id, chapter.index, p)).catch(() => undefined);
    const fresh = await store.getBook(book.id);
    if (fresh) await settleBook({ store, logger }, fresh);
  }

  async function masterOne(chapter: ChapterRecord, signal?: AbortSignal): Promise<void> {
    const now = new Date().toISOString();
    const claimed = await store.updateChapter(chapter.bookId, chapter.index,
      { status: 'mastering', leaseOwner: owner, leaseUntil: new Date(Date.now() + leaseMs).toISOString() },
      { status: ['rendered', 'mastering'], attempt: chapter.attempt, claimableBy: { owner, now } });
    if (!claimed) return;
    const book = await store.getBook(chapter.bookId);
    if (!book) return;
    const source = chapterSource(blobs, book.id, claimed.index, claimed.parts.length);
    const tags: Id3Tags = { title: claimed.title, album: book.title, artist: book.author, track: claimed.index };
    const renewer = setInterval(() => {
      void store.updateChapter(book.id, claimed.index, { leaseUntil: new Date(Date.now() + leaseMs).toISOString() }, { leaseOwner: owner }).catch(() => undefined);
    }, Math.max(100, leaseMs / 3));
    try {
      const key = chapterKey(book.id, claimed.index, 'mp3');
      const started = Date.now();
      const result = await master(source, tags, async (mp3) => void (await blobs.put(key, mp3, 'audio/mpeg')), signal);
      logger.info('audiobook chapter mastered', { bookId: book.id, chapter: claimed.index, ...result, ms: Date.now() - started });
      await deliver(book, claimed, key, 'mp3');
    } catch (err) {
      if (signal?.aborted) {
        // Stopped mid-chapter: no attempt is used, and the lease is given up so that a process masters it at once.
        logger.info('audiobook mastering stopped mid-chapter; it starts again after the restart', { bookId: book.id, chapter: claimed.index });
        await store.updateChapter(book.id, claimed.index, { leaseOwner: null, leaseUntil: null }, { leaseOwner: owner });
        return;
      }
      // A store out of reach or a full disk says nothing of the chapter: no attempt is used up, and so an
      // outage can never be what turns its MP3 into the WAV fallback.
      const outage = isUnreachableDependency(err);
      const attempts = claimed.masterAttempts + (outage ? 0 : 1);
      const reason = err instanceof Error ? err.message : String(err);
      if (!outage && attempts > deps.retryMs.length) {
        logger.error('audiobook mastering kept failing: delivering WAV', { bookId: book.id, chapter: claimed.index, attempts, reason });
        const key = chapterKey(book.id, claimed.index, 'wav');
        try {
          await blobs.put(key, chapterWav(source, claimed.parts), 'audio/wav');
          await store.updateChapter(book.id, claimed.index, { masterAttempts: attempts }, { leaseOwner: owner });
          return await deliver(book, claimed, key, 'wav');
        } catch (wavErr) {
          logger.error('audiobook WAV delivery failed; retrying', { bookId: book.id, chapter: claimed.index, err: wavErr as Error });
        }
      }
      const wait = deps.retryMs[Math.min(Math.max(attempts, 1), deps.retryMs.length) - 1] ?? 60_000;
      const retryAt = new Date(Date.now() + wait).toISOString();
      logger.warn('audiobook mastering failed; retrying', { bookId: book.id, chapter: claimed.index, attempts, retryAt, reason });
      await store.updateChapter(book.id, claimed.index, {
        masterAttempts: attempts, masterRetryAt: retryAt, leaseOwner: null, leaseUntil: null,
        error: outage ? `Mastering waits for the audio store (${reason}); retrying at ${retryAt}.` : `Mastering attempt ${attempts} failed (${reason}); retrying at ${retryAt}.`,
      }, { leaseOwner: owner });
    } finally {
      clearInterval(renewer);
    }
  }

  /**
   * Masters every chapter that is due, one after another, until `signal`
   * stops it: the chapter in hand is cut short (its ffmpeg killed, its lease
   * given up) and none after it is begun. Going through the rest (a minute or
   * more of ffmpeg when many books finished at once), or finishing one long
   * chapter, kept shutdown past its deadline; they are mastered after the restart.
   */
  async function tick(signal?: AbortSignal): Promise<void> {
    const now = new Date().toISOString();
    for (const chapter of await store.chaptersInStatus(['rendered', 'mastering'])) {
      if (signal?.aborted) return;
      if (chapter.status === 'mastering' && chapter.masterRetryAt && chapter.masterRetryAt > now) continue;
      if (chapter.leaseOwner && chapter.leaseOwner !== owner && chapter.leaseUntil && chapter.leaseUntil > now) continue;
      await masterOne(chapter, signal);
    }
  }

  return { tick };
}

/** Runs the mastering worker every `tickMs`; stopping cuts the chapter in hand short. */
export function runMasteringWorker(deps: MasteringDeps, tickMs: number): () => Promise<void> {
  const worker = createMasteringWorker(deps);
  const stopping = new AbortController();
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();
  const loop = () => {
    running = worker.tick(stopping.signal)
      .catch((err: unknown) => deps.logger.error('audiobook mastering tick failed', { err: err as Error }))
      .finally(() => {
        if (!stopping.signal.aborted) timer = setTimeout(loop, tickMs);
      });
  };
  loop();
  return async () => {
    stopping.abort();
    if (timer) clearTimeout(timer);
    await running;
  };
}
