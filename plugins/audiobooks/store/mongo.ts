import type { Db, Filter } from 'mongodb';
import type { BookNotification, BookRecord, ChapterRecord, LibraryEntry, SegmentRecord } from './records.ts';
import { definedOnly, type AudiobookStore, type BookCondition, type BookPatch, type ChapterCondition } from './port.ts';

/**
 * The audiobook store on MongoDB with the semantics of ./sqlite.ts. Each state
 * change is one conditional single-document write. Writes that touch several
 * documents (a chapter and its segments) take the book's version first, so
 * two adds to one book never interleave; they are ordered so that a crash
 * between them leaves only segments nobody reads (positions at or beyond the
 * chapter's count), which the next write of that chapter clears.
 */
type BookDoc = Omit<BookRecord, 'id'> & { _id: string };
type ChapterDoc = ChapterRecord & { _id: string };
type SegmentDoc = SegmentRecord & { _id: string; bookId: string; chapter: number };
type LibraryDoc = Omit<LibraryEntry, 'id'> & { _id: string };
type NotificationDoc = Omit<BookNotification, 'id'> & { _id: string };
type LeaseDoc = { _id: string; owner: string; until: string };

/** A chapter takes more segments only before it ever rendered. */
const APPENDABLE: ChapterRecord['status'][] = ['pending', 'cancelled'];

/** Segments written per insertMany: a 60,000-character chapter may have thousands. */
const SEGMENT_BATCH = 500;

const chapterId = (bookId: string, index: number) => `${bookId}:${index}`;
const segmentId = (bookId: string, index: number, position: number) => `${bookId}:${index}:${position}`;

function fromBook(doc: BookDoc | null): BookRecord | null {
  if (!doc) return null;
  const { _id, ...rest } = doc;
  return { ...rest, id: _id };
}

function fromChapter(doc: ChapterDoc | null): ChapterRecord | null {
  if (!doc) return null;
  const { _id: _ignored, ...rest } = doc;
  return rest;
}

function bookFilter(id: string, when: BookCondition | undefined): Filter<BookDoc> {
  const filter: Filter<BookDoc> = { _id: id };
  if (when?.status) filter.status = { $in: when.status };
  if (when?.version !== undefined) filter.version = when.version;
  return filter;
}

function chapterFilter(base: Filter<ChapterDoc>, when: ChapterCondition | undefined): Filter<ChapterDoc> {
  const filter: Filter<ChapterDoc> = { ...base };
  if (!when) return filter;
  if (when.status) filter.status = { $in: when.status };
  if (when.attempt !== undefined) filter.attempt = when.attempt;
  if (when.dispatchSeq !== undefined) filter.dispatchSeq = when.dispatchSeq;
  if (when.dispatch) filter.dispatch = { $in: when.dispatch };
  if (when.leaseOwner !== undefined) filter.leaseOwner = when.leaseOwner;
  if (when.claimableBy) {
    const { owner, now } = when.claimableBy;
    filter.$or = [{ leaseOwner: null }, { leaseOwner: owner }, { leaseUntil: null }, { leaseUntil: { $lte: now } }];
  }
  return filter;
}

const isDuplicateKey = (err: unknown) => (err as { code?: number } | null)?.code === 11000;

export async function createMongoAudiobookStore(db: Db, prefix: string): Promise<AudiobookStore> {
  const books = db.collection<BookDoc>(`${prefix}books`);
  const chapters = db.collection<ChapterDoc>(`${prefix}chapters`);
  const segments = db.collection<SegmentDoc>(`${prefix}segments`);
  const library = db.collection<LibraryDoc>(`${prefix}library`);
  const notifications = db.collection<NotificationDoc>(`${prefix}notifications`);
  const leases = db.collection<LeaseDoc>(`${prefix}leases`);
  await Promise.all([
    books.createIndex({ accountId: 1, createdAt: -1 }),
    books.createIndex({ status: 1 }),
    chapters.createIndex({ bookId: 1, index: 1 }, { unique: true }),
    chapters.createIndex({ status: 1 }),
    segments.createIndex({ bookId: 1, chapter: 1, position: 1 }, { unique: true }),
    library.createIndex({ accountId: 1, completedAt: -1 }),
    notifications.createIndex({ accountId: 1, createdAt: -1 }),
  ]);

  const bumpVersion = async (bookId: string, expected: number, patch: BookPatch = {}) => {
    const set = definedOnly(patch);
    const update = Object.keys(set).length > 0 ? { $inc: { version: 1 }, $set: set } : { $inc: { version: 1 } };
    return (await books.updateOne({ _id: bookId, version: expected }, update)).modifiedCount === 1;
  };

  const writeSegments = async (bookId: string, index: number, rows: SegmentRecord[]) => {
    for (let i = 0; i < rows.length; i += SEGMENT_BATCH) {
      const docs = rows.slice(i, i + SEGMENT_BATCH).map((s) => ({ ...s, _id: segmentId(bookId, index, s.position), bookId, chapter: index }));
      await segments.insertMany(docs, { ordered: true });
    }
  };

  return {
    async createBook(book) {
      const { id, ...rest } = book;
      await books.insertOne({ ...rest, _id: id });
    },
    async getBook(id) {
      return fromBook(await books.findOne({ _id: id }));
    },
    async listBooks(accountId, { offset, limit }) {
      const [docs, total] = await Promise.all([
        books.find({ accountId }).sort({ createdAt: -1, _id: -1 }).skip(offset).limit(limit).toArray(),
        books.countDocuments({ accountId }),
      ]);
      return { items: docs.map((d) => fromBook(d)!), total };
    },
    async booksInStatus(statuses) {
      const docs = await books.find({ status: { $in: statuses } }).sort({ createdAt: 1, _id: 1 }).toArray();
      return docs.map((d) => fromBook(d)!);
    },
    async countBooksInStatus(statuses) {
      return books.countDocuments({ status: { $in: statuses } });
    },
    async updateBook(id, patch, when) {
      const set = definedOnly(patch);
      const doc = Object.keys(set).length === 0
        ? await books.findOne(bookFilter(id, when))
        : await books.findOneAndUpdate(bookFilter(id, when), { $set: set }, { returnDocument: 'after' });
      return fromBook(doc);
    },

    async addChapter({ bookId, expectVersion, chapter, segments: rows, bookPatch }) {
      if (!(await bumpVersion(bookId, expectVersion, bookPatch))) return false;
      // Segments first: a crash before the chapter is written leaves rows the next add of this index clears.
      await segments.deleteMany({ bookId, chapter: chapter.index });
      await writeSegments(bookId, chapter.index, rows);
      try {
        await chapters.insertOne({ ...chapter, _id: chapterId(bookId, chapter.index) });
      } catch (err) {
        if (isDuplicateKey(err)) throw new Error(`chapter ${chapter.index} of ${bookId} already exists`);
        throw err;
      }
      return true;
    },
    async appendSegments({ bookId, expectVersion, index, expectSegments, segments: rows, patch, bookPatch }) {
      const current = await chapters.findOne({ _id: chapterId(bookId, index), status: { $in: APPENDABLE }, segments: expectSegments });
      if (!current) return false;
      if (!(await bumpVersion(bookId, expectVersion, bookPatch))) return false;
      await segments.deleteMany({ bookId, chapter: index, position: { $gte: expectSegments } });
      await writeSegments(bookId, index, rows);
      const updated = await chapters.updateOne(
        { _id: chapterId(bookId, index), status: { $in: APPENDABLE }, segments: expectSegments },
        { $set: definedOnly(patch) },
      );
      if (updated.modifiedCount === 1) return true;
      // The chapter moved on meanwhile (it started): the new rows are beyond its count; take them back.
      await segments.deleteMany({ bookId, chapter: index, position: { $gte: expectSegments } });
      return false;
    },
    async getChapter(bookId, index) {
      return fromChapter(await chapters.findOne({ _id: chapterId(bookId, index) }));
    },
    async listChapters(bookId) {
      const docs = await chapters.find({ bookId }).sort({ index: 1 }).toArray();
      return docs.map((d) => fromChapter(d)!);
    },
    async chaptersInStatus(statuses) {
      const docs = await chapters.find({ status: { $in: statuses } }).sort({ bookId: 1, index: 1 }).toArray();
      return docs.map((d) => fromChapter(d)!);
    },
    async updateChapter(bookId, index, patch, when) {
      const filter = chapterFilter({ _id: chapterId(bookId, index) }, when);
      const set = definedOnly(patch);
      const doc = Object.keys(set).length === 0
        ? await chapters.findOne(filter)
        : await chapters.findOneAndUpdate(filter, { $set: set }, { returnDocument: 'after' });
      return fromChapter(doc);
    },
    async updateChapters(bookId, patch, when) {
      return (await chapters.updateMany(chapterFilter({ bookId }, when), { $set: definedOnly(patch) })).matchedCount;
    },
    async readSegments(bookId, index, from, to) {
      const docs = await segments.find({ bookId, chapter: index, position: { $gte: from, $lt: to } }).sort({ position: 1 }).toArray();
      return docs.map((d) => ({ position: d.position, speaker: d.speaker, text: d.text, sceneBreak: d.sceneBreak }));
    },

    async addToLibrary(entry) {
      const { id, ...rest } = entry;
      await library.updateOne({ _id: id }, { $setOnInsert: rest }, { upsert: true });
    },
    async listLibrary(accountId, { offset, limit }) {
      const [docs, total] = await Promise.all([
        library.find({ accountId }).sort({ completedAt: -1, _id: -1 }).skip(offset).limit(limit).toArray(),
        library.countDocuments({ accountId }),
      ]);
      return { items: docs.map(({ _id, ...rest }) => ({ ...rest, id: _id })), total };
    },
    async addNotification(notification) {
      const { id, ...rest } = notification;
      await notifications.updateOne({ _id: id }, { $setOnInsert: rest }, { upsert: true });
    },
    async listNotifications(accountId, limit) {
      const docs = await notifications.find({ accountId }).sort({ createdAt: -1, _id: -1 }).limit(limit).toArray();
      return docs.map(({ _id, ...rest }) => ({ ...rest, id: _id }));
    },
    async takeLease(name, owner, until, now) {
      try {
        await leases.updateOne(
          { _id: name, $or: [{ owner }, { until: { $lte: now } }] },
          { $set: { owner, until } },
          { upsert: true },
        );
        return true;
      } catch (err) {
        // The upsert tried to insert because another owner's live lease did not match.
        if (isDuplicateKey(err)) return false;
        throw err;
      }
    },
  };
}
