import type { DownloadLinks } from '../../core/downloads.ts';
import { STARTED, type BookRecord, type ChapterRecord, type LibraryEntry, type BookNotification } from './store/records.ts';

/** Download links of chapters live 24 hours (SPEC "Limits"). */
export const LINK_TTL_SECONDS = 86_400;

/** Chapters that render (again) on the next start, and are estimated rather than charged. */
const NOT_YET_RENDERED = new Set(['pending', 'failed', 'cancelled']);

export interface ViewContext {
  downloads: DownloadLinks;
  /** tokens a chapter of this many characters costs */
  priceOf(characters: number): number;
  chapterCharsMax: number;
  /** started books in the whole service (this one included when started) */
  startedBooks: number;
  /** list items carry no download links */
  withLinks: boolean;
}

export function chapterView(c: ChapterRecord, ctx: Pick<ViewContext, 'downloads' | 'withLinks'>): Record<string, unknown> {
  const partsDone = c.parts.filter((p) => p !== null).length;
  const started = c.status !== 'pending' && c.status !== 'cancelled';
  const link = ctx.withLinks && c.status === 'completed' && c.audioKey ? ctx.downloads.sign(c.audioKey, LINK_TTL_SECONDS) : null;
  const view: Record<string, unknown> = {
    index: c.index,
    title: c.title,
    status: c.status,
    characters: c.characters,
    segments: c.segments,
    tokenCost: c.charge?.tokens ?? null,
    progress: started || partsDone > 0 ? { partsDone, partsPlanned: c.partsPlanned } : null,
    durationSeconds: c.durationSeconds,
    audioFormat: c.status === 'completed' ? c.audioFormat : null,
    error: c.error,
    retryAt: c.status === 'pending' ? c.retryAt : null,
    completedAt: c.completedAt,
  };
  if (ctx.withLinks) {
    view.audioUrl = link?.url ?? null;
    view.audioUrlExpiresAt = link?.expiresAt ?? null;
  }
  return view;
}

export function totalsOf(chapters: ChapterRecord[], priceOf: (characters: number) => number) {
  let characters = 0, estimatedTokens = 0, tokensCharged = 0, durationSeconds = 0, completedChapters = 0;
  for (const c of chapters) {
    characters += c.characters;
    if (c.charge) tokensCharged += c.charge.tokens;
    else if (NOT_YET_RENDERED.has(c.status)) estimatedTokens += priceOf(c.characters);
    if (c.status === 'completed') {
      completedChapters++;
      durationSeconds += c.durationSeconds ?? 0;
    }
  }
  return { chapters: chapters.length, completedChapters, characters, estimatedTokens, tokensCharged, durationSeconds: Math.round(durationSeconds * 1000) / 1000 };
}

export function bookView(b: BookRecord, chapters: ChapterRecord[], ctx: ViewContext): Record<string, unknown> {
  const started = STARTED.includes(b.status);
  return {
    id: b.id,
    title: b.title,
    author: b.author,
    engine: b.engine,
    status: b.status,
    narratorVoice: b.narratorVoice,
    cast: b.cast.map((c) => ({ speaker: c.speaker, voiceId: c.voiceId })),
    waitingReason: started ? b.waitingReason : null,
    error: b.error,
    totals: totalsOf(chapters, ctx.priceOf),
    otherBooksWaiting: started ? Math.max(0, ctx.startedBooks - 1) : null,
    chapterCharsMax: ctx.chapterCharsMax,
    chapters: chapters.map((c) => chapterView(c, ctx)),
    createdAt: b.createdAt,
    completedAt: b.completedAt,
  };
}

export function libraryView(e: LibraryEntry, downloads: DownloadLinks): Record<string, unknown> {
  const link = downloads.sign(e.audioKey, LINK_TTL_SECONDS);
  return {
    id: e.id, bookId: e.bookId, bookTitle: e.bookTitle, author: e.author, chapterIndex: e.chapterIndex, title: e.title,
    audioFormat: e.audioFormat, durationSeconds: e.durationSeconds, audioUrl: link.url, audioUrlExpiresAt: link.expiresAt, completedAt: e.completedAt,
  };
}

export function notificationView(n: BookNotification): Record<string, unknown> {
  return { id: n.id, kind: n.kind, message: n.message, bookId: n.bookId, createdAt: n.createdAt };
}
