import { randomUUID } from 'node:crypto';
import type { Bus } from '../../../core/ports/bus.ts';
import { TOPICS } from '../../../core/ports/bus.ts';
import type { Blobs } from '../../../core/ports/blobs.ts';
import type { SpeechEngine, VoiceProfile } from '../../../core/ports/engine.ts';
import type { VoiceCatalog } from '../../../core/catalog.ts';
import type { BillingService } from '../../../core/billing/service.ts';
import type { Logger } from '../../../core/logger.ts';
import type { Lifecycle } from '../../../core/services.ts';
import { isAbortError, linkedController } from '../../../core/speechkit/abort.ts';
import type { AudiobookStore } from '../store/port.ts';
import type { ChapterRecord, PartRecord } from '../store/records.ts';
import type { AudiobookSettings } from '../config.ts';
import type { ApiWorkProbe } from '../api-work.ts';
import { failAttempt } from '../attempts.ts';
import { isUnreachableDependency } from '../../../core/unreachable.ts';
import { audibleGaps, planParts, scriptUnits, SILENCE } from '../script.ts';
import { BOOK_SAMPLE_RATE, partKey, renderPart, speaks } from './part.ts';

/**
 * The chapter renderer: a member of the inference consumer group on
 * `audiobook.chapters`. A message names one dispatch of one chapter; the
 * worker claims the chapter under a lease (renewed while it renders, so a
 * worker that dies leaves a chapter another member claims once the lease
 * lapses), renders it part by part into the blobs port and records each part
 * as it finishes, so a retry, a crash or a pause resumes after the last
 * finished part. Between parts it gives the chapter back when API work is
 * waiting: books render only while the fleet has nothing else to do.
 */
export const RENDER_GROUP = 'audiobook-render';
/** Renders still running this long before the shutdown deadline are cut and handed back. */
const HAND_BACK_MARGIN_MS = 2000;

export interface ChapterMessage {
  bookId: string;
  index: number;
  attempt: number;
  seq: number;
}

export interface RendererDeps {
  store: AudiobookStore;
  bus: Bus;
  blobs: Blobs;
  engine: SpeechEngine;
  catalog: VoiceCatalog;
  billing: BillingService;
  logger: Logger;
  lifecycle: Lifecycle;
  apiWork: ApiWorkProbe;
  settings: AudiobookSettings;
}

class LeaseHeld extends Error {
  constructor(m: ChapterMessage) {
    super(`chapter ${m.index} of ${m.bookId} is being rendered by another worker`);
  }
}

class HandedBack extends Error {
  constructor(m: ChapterMessage) {
    super(`chapter ${m.index} of ${m.bookId} was handed back: the worker is shutting down`);
  }
}

export async function startChapterRenderer(deps: RendererDeps): Promise<() => Promise<void>> {
  const { store, settings, logger } = deps;
  const owner = `abk_render_${randomUUID()}`;
  const handBack = new AbortController();
  const mine = (c: ChapterRecord) => ({ status: ['rendering' as const], attempt: c.attempt, leaseOwner: owner });
  const later = (ms: number) => new Date(Date.now() + ms).toISOString();

  async function voicesOf(bookId: string): Promise<(speaker: string | null) => VoiceProfile> {
    const book = await store.getBook(bookId);
    if (!book) throw new Error(`audiobook ${bookId} vanished`);
    const resolve = (voice: string) => deps.catalog.resolve({ voice, engine: book.engine, accountId: book.accountId, allowClones: false, param: 'voiceId' });
    const narrator = await resolve(book.narratorVoice);
    const cast = new Map<string, VoiceProfile>();
    for (const entry of book.cast) cast.set(entry.speaker, await resolve(entry.voiceId));
    return (speaker) => (speaker === null ? narrator : cast.get(speaker) ?? narrator);
  }

  /** Renders what is left of a claimed chapter; returns when it is rendered, paused, or lost to someone else. */
  async function render(message: ChapterMessage, chapter: ChapterRecord, signal: AbortSignal): Promise<void> {
    const { bookId, index } = chapter;
    const voiceOf = await voicesOf(bookId);
    const script = await store.readSegments(bookId, index, 0, chapter.segments);
    const planned = scriptUnits(chapter.title, script, settings.partChars);
    const plan = planParts(planned, settings.partChars);
    const units = audibleGaps(planned, speaks);
    // A plan that no longer matches the recorded parts (the part size changed) starts over.
    const parts: Array<PartRecord | null> = chapter.parts.length === plan.length || chapter.parts.every((p) => p === null) ? [...chapter.parts] : [];
    for (const [p, range] of plan.entries()) {
      const done = parts[p];
      if (done && (await deps.blobs.exists(partKey(bookId, index, p)))) continue;
      if (await deps.apiWork.waiting()) {
        await store.updateChapter(bookId, index, { dispatch: 'paused', leaseOwner: null, leaseUntil: null }, mine(chapter));
        logger.info('audiobook chapter paused: API work is waiting', { bookId, chapter: index, part: p });
        return;
      }
      if (handBack.signal.aborted) throw new HandedBack(message);
      if (signal.aborted) return;
      const samples = await renderPart(deps, partKey(bookId, index, p), { units: units.slice(range.from, range.to), voiceOf, signal });
      parts[p] = { samples, renderedAt: new Date().toISOString(), attempt: chapter.attempt };
      while (parts.length < plan.length) parts.push(null);
      const recorded = await store.updateChapter(bookId, index, { parts, partsPlanned: plan.length, lastProgressAt: new Date().toISOString() }, mine(chapter));
      if (!recorded) return void logger.warn('audiobook chapter was taken from this worker mid-render', { bookId, chapter: index });
    }
    const samples = parts.reduce((sum, part) => sum + (part?.samples ?? 0), 0);
    const durationSeconds = SILENCE.fileStart + samples / BOOK_SAMPLE_RATE + SILENCE.fileEnd;
    logger.info('audiobook chapter rendered', { bookId, chapter: index, parts: plan.length, seconds: Math.round(durationSeconds) });
    await store.updateChapter(bookId, index, {
      status: 'rendered', dispatch: null, leaseOwner: null, leaseUntil: null, renderedAt: new Date().toISOString(),
      durationSeconds: Math.round(durationSeconds * 1000) / 1000, partsPlanned: plan.length, error: null,
    }, mine(chapter));
  }

  async function handle(message: ChapterMessage): Promise<void> {
    const { bookId, index, attempt, seq } = message;
    const current = await store.getChapter(bookId, index);
    if (!current || current.status !== 'rendering' || current.attempt !== attempt || current.dispatchSeq !== seq) return;
    const now = new Date().toISOString();
    const claimed = await store.updateChapter(bookId, index, {
      dispatch: 'running', leaseOwner: owner, leaseUntil: later(settings.leaseMs), lastProgressAt: now, startedAt: current.startedAt ?? now,
    }, { status: ['rendering'], attempt, dispatchSeq: seq, dispatch: ['queued', 'running'], claimableBy: { owner, now } });
    if (!claimed) {
      const again = await store.getChapter(bookId, index);
      if (again?.status === 'rendering' && again.attempt === attempt && again.dispatchSeq === seq && again.dispatch === 'running') throw new LeaseHeld(message);
      return;
    }
    // The chapter was taken from this worker (its attempt failed for lack of progress): stop the engine.
    const lost = new AbortController();
    const linked = linkedController(handBack.signal, lost.signal);
    const renewer = setInterval(() => {
      void store.updateChapter(bookId, index, { leaseUntil: later(settings.leaseMs) }, mine(claimed))
        .then((held) => held || lost.abort(new Error('chapter taken from this worker')))
        .catch(() => undefined);
    }, Math.max(100, settings.leaseMs / 3));
    try {
      await render(message, claimed, linked.signal);
    } catch (err) {
      if (lost.signal.aborted && !handBack.signal.aborted) {
        return void logger.warn('audiobook chapter was taken from this worker mid-render', { bookId, chapter: index });
      }
      if (handBack.signal.aborted && (err instanceof HandedBack || isAbortError(err))) {
        // Back to the queue; the message stays uncommitted and comes back to a member of the group.
        await store.updateChapter(bookId, index, { dispatch: 'queued', leaseOwner: null, leaseUntil: null }, mine(claimed));
        throw new HandedBack(message);
      }
      const reason = err instanceof Error ? err.message : String(err);
      await failAttempt({ ...deps, retryMs: settings.retryMs }, claimed, reason, mine(claimed), isUnreachableDependency(err));
    } finally {
      clearInterval(renewer);
      // Drops its listener on the worker-wide hand-back signal.
      linked.abort();
    }
  }

  const subscription = await deps.bus.subscribe<ChapterMessage>({
    topic: TOPICS.chapters,
    group: RENDER_GROUP,
    concurrency: settings.renderConcurrency,
    // Lease conflicts are retried until a dead worker's lease lapses.
    maxAttempts: 100,
    handler: (message) => handle(message.value),
  });

  return async () => {
    const deadline = deps.lifecycle.deadline();
    const timer = deadline === null ? null : setTimeout(() => handBack.abort(), Math.max(0, deadline - Date.now() - HAND_BACK_MARGIN_MS));
    try {
      await subscription.stop();
    } finally {
      if (timer) clearTimeout(timer);
    }
  };
}
