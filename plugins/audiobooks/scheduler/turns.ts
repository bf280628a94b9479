import type { BookRecord, ChapterRecord } from '../store/records.ts';

/**
 * Fair turns, a chapter each: accounts first (the account whose last turn is
 * oldest goes first, one never served before all others), then the books of
 * one account the same way, then the order they were started in. Pure.
 */
export interface TurnCandidate {
  book: BookRecord;
  /** the chapter it would render next */
  chapter: ChapterRecord;
}

export function lastTurnByAccount(books: BookRecord[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const b of books) {
    if (b.lastTurnAt && (out.get(b.accountId) ?? '') < b.lastTurnAt) out.set(b.accountId, b.lastTurnAt);
  }
  return out;
}

export function turnOrder(candidates: TurnCandidate[], accountTurns: Map<string, string>): TurnCandidate[] {
  const key = (c: TurnCandidate) => [accountTurns.get(c.book.accountId) ?? '', c.book.lastTurnAt ?? '', c.book.queuedAt ?? '', c.book.id] as const;
  return [...candidates].sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i] < kb[i] ? -1 : 1;
    return 0;
  });
}

/** The chapter a book renders next: the lowest-numbered pending one that is due (not waiting for its retry time). */
export function nextChapter(chapters: ChapterRecord[], now: string): ChapterRecord | null {
  return chapters.find((c) => c.status === 'pending' && c.refundDue === null && (c.retryAt === null || c.retryAt <= now)) ?? null;
}

/** A book renders one chapter at a time. */
export function hasChapterInFlight(chapters: ChapterRecord[]): boolean {
  return chapters.some((c) => c.status === 'rendering');
}
