import type {
  BookNotification, BookRecord, BookStatus, ChapterRecord, ChapterStatus, Dispatch, LibraryEntry, SegmentRecord,
} from './records.ts';

/**
 * The audiobook plugin's own store (on the system of record through
 * coreServices.database). Adapters: ./sqlite.ts and ./mongo.ts, held to one
 * contract (test/contract/audiobooks-store.test.ts). Every state change is a
 * conditional write: the condition is checked and the change applied as one
 * step, so a scheduler, a worker that came back late and a cancel racing each
 * other are decided by the store.
 */

export interface Page<T> {
  items: T[];
  total: number;
}

export interface BookCondition {
  status?: BookStatus[];
  version?: number;
}

export interface ChapterCondition {
  status?: ChapterStatus[];
  attempt?: number;
  dispatchSeq?: number;
  dispatch?: Array<Dispatch | null>;
  leaseOwner?: string | null;
  /** nobody holds the lease, it lapsed at `now`, or `owner` holds it */
  claimableBy?: { owner: string; now: string };
}

export type BookPatch = Partial<Omit<BookRecord, 'id' | 'accountId' | 'createdAt'>>;
export type ChapterPatch = Partial<Omit<ChapterRecord, 'bookId' | 'accountId' | 'index' | 'createdAt'>>;

export interface AudiobookStore {
  createBook(book: BookRecord): Promise<void>;
  getBook(id: string): Promise<BookRecord | null>;
  /** one account's books, newest first */
  listBooks(accountId: string, page: { offset: number; limit: number }): Promise<Page<BookRecord>>;
  /** every book in these states, oldest first (the scheduler's view; started books are few) */
  booksInStatus(statuses: BookStatus[]): Promise<BookRecord[]>;
  countBooksInStatus(statuses: BookStatus[]): Promise<number>;
  /** applies `patch` when `when` holds; the book after the change, or null */
  updateBook(id: string, patch: BookPatch, when?: BookCondition): Promise<BookRecord | null>;

  /**
   * Adds a chapter and its script when the book is still at `expectVersion`;
   * bumps the version and applies `bookPatch` (the cast, a reopened status) with it.
   */
  addChapter(input: { bookId: string; expectVersion: number; chapter: ChapterRecord; segments: SegmentRecord[]; bookPatch?: BookPatch }): Promise<boolean>;
  /**
   * Appends segments to a chapter not yet started (pending or cancelled) that still has `expectSegments`
   * segments, when the book is still at `expectVersion`; applies `patch`
   * (new counts and hashes) with them. Bumps the book's version and applies `bookPatch`.
   */
  appendSegments(input: {
    bookId: string; expectVersion: number; index: number; expectSegments: number; segments: SegmentRecord[]; patch: ChapterPatch; bookPatch?: BookPatch;
  }): Promise<boolean>;
  getChapter(bookId: string, index: number): Promise<ChapterRecord | null>;
  /** ordered by index */
  listChapters(bookId: string): Promise<ChapterRecord[]>;
  /** every chapter in these states, across books */
  chaptersInStatus(statuses: ChapterStatus[]): Promise<ChapterRecord[]>;
  updateChapter(bookId: string, index: number, patch: ChapterPatch, when?: ChapterCondition): Promise<ChapterRecord | null>;
  /** applies `patch` to every chapter of the book matching `when`; how many changed */
  updateChapters(bookId: string, patch: ChapterPatch, when: ChapterCondition): Promise<number>;
  /** segments at positions `from` (inclusive) to `to` (exclusive), in order */
  readSegments(bookId: string, index: number, from: number, to: number): Promise<SegmentRecord[]>;

  /** idempotent on the entry id */
  addToLibrary(entry: LibraryEntry): Promise<void>;
  /** newest first */
  listLibrary(accountId: string, page: { offset: number; limit: number }): Promise<Page<LibraryEntry>>;
  /** idempotent on the notification id */
  addNotification(notification: BookNotification): Promise<void>;
  /** newest first */
  listNotifications(accountId: string, limit: number): Promise<BookNotification[]>;

  /** takes or renews a named lease (one scheduler at a time); false when another owner holds it */
  takeLease(name: string, owner: string, until: string, now: string): Promise<boolean>;
}

/** The condition as a predicate: the SQLite adapter checks it in its write transaction. */
export function chapterMatches(chapter: ChapterRecord, when: ChapterCondition | undefined): boolean {
  if (!when) return true;
  if (when.status && !when.status.includes(chapter.status)) return false;
  if (when.attempt !== undefined && chapter.attempt !== when.attempt) return false;
  if (when.dispatchSeq !== undefined && chapter.dispatchSeq !== when.dispatchSeq) return false;
  if (when.dispatch && !when.dispatch.includes(chapter.dispatch)) return false;
  if (when.leaseOwner !== undefined && chapter.leaseOwner !== when.leaseOwner) return false;
  if (when.claimableBy) {
    const { owner, now } = when.claimableBy;
    const free = chapter.leaseOwner === null || chapter.leaseOwner === owner || chapter.leaseUntil === null || chapter.leaseUntil <= now;
    if (!free) return false;
  }
  return true;
}

export function bookMatches(book: BookRecord, when: BookCondition | undefined): boolean {
  if (!when) return true;
  if (when.status && !when.status.includes(book.status)) return false;
  if (when.version !== undefined && book.version !== when.version) return false;
  return true;
}

/** Drops keys whose value is undefined, so a patch never erases a field by accident. */
export function definedOnly<T extends object>(patch: T): Partial<T> {
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as Partial<T>;
}
