import type { EmbeddedDb } from '../../../core/adapters/embedded-db.ts';
import type { BookNotification, BookRecord, ChapterRecord, LibraryEntry, SegmentRecord } from './records.ts';
import { bookMatches, chapterMatches, definedOnly, type AudiobookStore, type BookPatch } from './port.ts';

/**
 * The audiobook store on the embedded SQLite file. Books and chapters are a
 * JSON document beside the columns queries need; a conditional update reads,
 * checks and writes inside one IMMEDIATE transaction, which also holds across
 * processes sharing the file. Segments are rows, read a range at a time.
 */
/** A chapter takes more segments only before it ever rendered. */
const APPENDABLE = ['pending', 'cancelled'];

export function createSqliteAudiobookStore(db: EmbeddedDb, prefix: string): AudiobookStore {
  const t = (name: string) => `${prefix}${name}`;
  db.exec(`
CREATE TABLE IF NOT EXISTS ${t('books')} (
  id TEXT PRIMARY KEY, account_id TEXT NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL, doc TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ${t('books_by_account')} ON ${t('books')} (account_id, created_at);
CREATE INDEX IF NOT EXISTS ${t('books_by_status')} ON ${t('books')} (status);
CREATE TABLE IF NOT EXISTS ${t('chapters')} (
  book_id TEXT NOT NULL, idx INTEGER NOT NULL, status TEXT NOT NULL, doc TEXT NOT NULL, PRIMARY KEY (book_id, idx)
);
CREATE INDEX IF NOT EXISTS ${t('chapters_by_status')} ON ${t('chapters')} (status);
CREATE TABLE IF NOT EXISTS ${t('segments')} (
  book_id TEXT NOT NULL, chapter INTEGER NOT NULL, position INTEGER NOT NULL,
  speaker TEXT, text TEXT NOT NULL, scene_break INTEGER NOT NULL,
  PRIMARY KEY (book_id, chapter, position)
);
CREATE TABLE IF NOT EXISTS ${t('library')} (
  id TEXT PRIMARY KEY, account_id TEXT NOT NULL, completed_at TEXT NOT NULL, doc TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ${t('library_by_account')} ON ${t('library')} (account_id, completed_at);
CREATE TABLE IF NOT EXISTS ${t('notifications')} (
  id TEXT PRIMARY KEY, account_id TEXT NOT NULL, created_at TEXT NOT NULL, doc TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ${t('notifications_by_account')} ON ${t('notifications')} (account_id, created_at);
CREATE TABLE IF NOT EXISTS ${t('leases')} (name TEXT PRIMARY KEY, owner TEXT NOT NULL, until TEXT NOT NULL);
`);

  const q = {
    insertBook: db.prepare(`INSERT INTO ${t('books')} (id, account_id, status, created_at, doc) VALUES (?, ?, ?, ?, ?)`),
    getBook: db.prepare(`SELECT doc FROM ${t('books')} WHERE id = ?`),
    writeBook: db.prepare(`UPDATE ${t('books')} SET status = ?, doc = ? WHERE id = ?`),
    listBooks: db.prepare(`SELECT doc FROM ${t('books')} WHERE account_id = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`),
    countBooks: db.prepare(`SELECT COUNT(*) AS n FROM ${t('books')} WHERE account_id = ?`),
    insertChapter: db.prepare(`INSERT INTO ${t('chapters')} (book_id, idx, status, doc) VALUES (?, ?, ?, ?)`),
    getChapter: db.prepare(`SELECT doc FROM ${t('chapters')} WHERE book_id = ? AND idx = ?`),
    listChapters: db.prepare(`SELECT doc FROM ${t('chapters')} WHERE book_id = ? ORDER BY idx`),
    writeChapter: db.prepare(`UPDATE ${t('chapters')} SET status = ?, doc = ? WHERE book_id = ? AND idx = ?`),
    insertSegment: db.prepare(`INSERT INTO ${t('segments')} (book_id, chapter, position, speaker, text, scene_break) VALUES (?, ?, ?, ?, ?, ?)`),
    deleteSegmentsFrom: db.prepare(`DELETE FROM ${t('segments')} WHERE book_id = ? AND chapter = ? AND position >= ?`),
    readSegments: db.prepare(`SELECT position, speaker, text, scene_break AS sceneBreak FROM ${t('segments')}
      WHERE book_id = ? AND chapter = ? AND position >= ? AND position < ? ORDER BY position`),
    insertLibrary: db.prepare(`INSERT OR IGNORE INTO ${t('library')} (id, account_id, completed_at, doc) VALUES (?, ?, ?, ?)`),
    listLibrary: db.prepare(`SELECT doc FROM ${t('library')} WHERE account_id = ? ORDER BY completed_at DESC, id DESC LIMIT ? OFFSET ?`),
    countLibrary: db.prepare(`SELECT COUNT(*) AS n FROM ${t('library')} WHERE account_id = ?`),
    insertNotification: db.prepare(`INSERT OR IGNORE INTO ${t('notifications')} (id, account_id, created_at, doc) VALUES (?, ?, ?, ?)`),
    listNotifications: db.prepare(`SELECT doc FROM ${t('notifications')} WHERE account_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`),
    takeLease: db.prepare(`INSERT INTO ${t('leases')} (name, owner, until) VALUES (@name, @owner, @until)
      ON CONFLICT (name) DO UPDATE SET owner = @owner, until = @until WHERE ${t('leases')}.owner = @owner OR ${t('leases')}.until <= @now`),
  };

  const parse = <T>(row: unknown): T => JSON.parse((row as { doc: string }).doc) as T;
  const readBook = (id: string) => {
    const row = q.getBook.get(id);
    return row ? parse<BookRecord>(row) : null;
  };
  const readChapter = (bookId: string, index: number) => {
    const row = q.getChapter.get(bookId, index);
    return row ? parse<ChapterRecord>(row) : null;
  };
  const insertSegments = (bookId: string, chapter: number, segments: SegmentRecord[]) => {
    for (const s of segments) q.insertSegment.run(bookId, chapter, s.position, s.speaker, s.text, s.sceneBreak ? 1 : 0);
  };
  /** bumps the version (and applies `patch`) when the book is still at `expected`; false otherwise */
  const bumpVersion = (bookId: string, expected: number, patch: BookPatch = {}): boolean => {
    const book = readBook(bookId);
    if (!book || book.version !== expected) return false;
    const next = { ...book, ...definedOnly(patch), version: book.version + 1 };
    q.writeBook.run(next.status, JSON.stringify(next), bookId);
    return true;
  };
  const inList = (column: string, values: string[]) => `${column} IN (${values.map(() => '?').join(', ')})`;

  return {
    async createBook(book) {
      q.insertBook.run(book.id, book.accountId, book.status, book.createdAt, JSON.stringify(book));
    },
    async getBook(id) {
      return readBook(id);
    },
    async listBooks(accountId, { offset, limit }) {
      const items = q.listBooks.all(accountId, limit, offset).map((row) => parse<BookRecord>(row));
      return { items, total: (q.countBooks.get(accountId) as { n: number }).n };
    },
    async booksInStatus(statuses) {
      if (statuses.length === 0) return [];
      const rows = db.prepare(`SELECT doc FROM ${t('books')} WHERE ${inList('status', statuses)} ORDER BY created_at, id`).all(...statuses);
      return rows.map((row) => parse<BookRecord>(row));
    },
    async countBooksInStatus(statuses) {
      if (statuses.length === 0) return 0;
      return (db.prepare(`SELECT COUNT(*) AS n FROM ${t('books')} WHERE ${inList('status', statuses)}`).get(...statuses) as { n: number }).n;
    },
    async updateBook(id, patch, when) {
      return db.transaction(() => {
        const book = readBook(id);
        if (!book || !bookMatches(book, when)) return null;
        const next = { ...book, ...definedOnly(patch) };
        q.writeBook.run(next.status, JSON.stringify(next), id);
        return next;
      }).immediate();
    },

    async addChapter({ bookId, expectVersion, chapter, segments, bookPatch }) {
      return db.transaction(() => {
        if (!bumpVersion(bookId, expectVersion, bookPatch)) return false;
        if (readChapter(bookId, chapter.index)) throw new Error(`chapter ${chapter.index} of ${bookId} already exists`);
        q.deleteSegmentsFrom.run(bookId, chapter.index, 0);
        insertSegments(bookId, chapter.index, segments);
        q.insertChapter.run(bookId, chapter.index, chapter.status, JSON.stringify(chapter));
        return true;
      }).immediate();
    },
    async appendSegments({ bookId, expectVersion, index, expectSegments, segments, patch, bookPatch }) {
      return db.transaction(() => {
        const chapter = readChapter(bookId, index);
        if (!chapter || !APPENDABLE.includes(chapter.status) || chapter.segments !== expectSegments) return false;
        if (!bumpVersion(bookId, expectVersion, bookPatch)) return false;
        q.deleteSegmentsFrom.run(bookId, index, expectSegments);
        insertSegments(bookId, index, segments);
        const next = { ...chapter, ...definedOnly(patch) };
        q.writeChapter.run(next.status, JSON.stringify(next), bookId, index);
        return true;
      }).immediate();
    },
    async getChapter(bookId, index) {
      return readChapter(bookId, index);
    },
    async listChapters(bookId) {
      return q.listChapters.all(bookId).map((row) => parse<ChapterRecord>(row));
    },
    async chaptersInStatus(statuses) {
      if (statuses.length === 0) return [];
      const rows = db.prepare(`SELECT doc FROM ${t('chapters')} WHERE ${inList('status', statuses)} ORDER BY book_id, idx`).all(...statuses);
      return rows.map((row) => parse<ChapterRecord>(row));
    },
    async updateChapter(bookId, index, patch, when) {
      return db.transaction(() => {
        const chapter = readChapter(bookId, index);
        if (!chapter || !chapterMatches(chapter, when)) return null;
        const next = { ...chapter, ...definedOnly(patch) };
        q.writeChapter.run(next.status, JSON.stringify(next), bookId, index);
        return next;
      }).immediate();
    },
    async updateChapters(bookId, patch, when) {
      return db.transaction(() => {
        let changed = 0;
        for (const row of q.listChapters.all(bookId)) {
          const chapter = parse<ChapterRecord>(row);
          if (!chapterMatches(chapter, when)) continue;
          const next = { ...chapter, ...definedOnly(patch) };
          q.writeChapter.run(next.status, JSON.stringify(next), bookId, chapter.index);
          changed++;
        }
        return changed;
      }).immediate();
    },
    async readSegments(bookId, index, from, to) {
      const rows = q.readSegments.all(bookId, index, from, to) as Array<Omit<SegmentRecord, 'sceneBreak'> & { sceneBreak: number }>;
      return rows.map((r) => ({ position: r.position, speaker: r.speaker, text: r.text, sceneBreak: r.sceneBreak === 1 }));
    },

    async addToLibrary(entry: LibraryEntry) {
      q.insertLibrary.run(entry.id, entry.accountId, entry.completedAt, JSON.stringify(entry));
    },
    async listLibrary(accountId, { offset, limit }) {
      const items = q.listLibrary.all(accountId, limit, offset).map((row) => parse<LibraryEntry>(row));
      return { items, total: (q.countLibrary.get(accountId) as { n: number }).n };
    },
    async addNotification(notification: BookNotification) {
      q.insertNotification.run(notification.id, notification.accountId, notification.createdAt, JSON.stringify(notification));
    },
    async listNotifications(accountId, limit) {
      return q.listNotifications.all(accountId, limit).map((row) => parse<BookNotification>(row));
    },
    async takeLease(name, owner, until, now) {
      return q.takeLease.run({ name, owner, until, now }).changes === 1;
    },
  };
}
