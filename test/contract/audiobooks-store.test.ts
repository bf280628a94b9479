import test, { type ExecutionContext } from 'ava';
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { openMemoryDb } from '../../core/adapters/embedded-db.ts';
import { createSqliteAudiobookStore } from '../../plugins/audiobooks/store/sqlite.ts';
import { createMongoAudiobookStore } from '../../plugins/audiobooks/store/mongo.ts';
import type { AudiobookStore } from '../../plugins/audiobooks/store/port.ts';
import type { BookRecord, ChapterRecord, SegmentRecord } from '../../plugins/audiobooks/store/records.ts';

/** The audiobook store contract, run against every adapter. */
type Harness = { store: AudiobookStore; close(): Promise<void> };
type Open = () => Promise<Harness>;

const NOW = '2026-11-21T10:00:00.000Z';
const at = (seconds: number) => new Date(Date.parse(NOW) + seconds * 1000).toISOString();

function newBook(overrides: Partial<BookRecord> = {}): BookRecord {
  return {
    id: `abk_${randomUUID()}`, accountId: 'acc_1', title: 'Sách', author: null, engine: 'v4', narratorVoice: 'vi-north-female-mai',
    cast: [{ speaker: 'Lan', voiceId: 'vi-south-female-lan' }], status: 'draft', waitingReason: null, error: null,
    payerKeyId: 'key_1', payerGrantId: 'grt_1', version: 0, run: 0, lastTurnAt: null, queuedAt: null, quotaRetryAt: null,
    createdAt: NOW, completedAt: null, ...overrides,
  };
}

function newChapter(bookId: string, index: number, overrides: Partial<ChapterRecord> = {}): ChapterRecord {
  return {
    bookId, accountId: 'acc_1', index, title: `Chương ${index}`, status: 'pending', characters: 100, segments: 2, contentHash: `h${index}`,
    partsPlanned: 1, parts: [], attempt: 0, dispatch: null, dispatchSeq: 0, leaseOwner: null, leaseUntil: null, lastProgressAt: null,
    charge: null, refundDue: null, failures: 0, retryAt: null, error: null, masterAttempts: 0, masterRetryAt: null, audioKey: null,
    audioFormat: null, durationSeconds: null, createdAt: NOW, startedAt: null, renderedAt: null, completedAt: null, ...overrides,
  };
}

const segs = (from: number, n: number): SegmentRecord[] =>
  Array.from({ length: n }, (_, i) => ({ position: from + i, speaker: (from + i) % 2 ? 'Lan' : null, text: `Đoạn ${from + i}`, sceneBreak: (from + i) % 3 === 1 }));

function storeContract(adapter: string, open: Open): void {
  const it = (rule: string, body: (store: AudiobookStore, t: ExecutionContext) => Promise<void>) =>
    test(`${adapter}: ${rule}`, async (t) => {
      const harness = await open();
      t.teardown(() => harness.close());
      await body(harness.store, t);
    });

  it('books are stored as given, listed per account newest first with a total, and found by status', async (store, t) => {
    const a = newBook({ createdAt: at(1) });
    const b = newBook({ createdAt: at(2), status: 'queued' });
    const other = newBook({ accountId: 'acc_2', status: 'queued', createdAt: at(3) });
    for (const book of [a, b, other]) await store.createBook(book);
    t.deepEqual(await store.getBook(a.id), a);
    t.is(await store.getBook('abk_missing'), null);
    const page1 = await store.listBooks('acc_1', { offset: 0, limit: 1 });
    t.deepEqual(page1, { items: [b], total: 2 });
    t.deepEqual((await store.listBooks('acc_1', { offset: 1, limit: 1 })).items, [a]);
    t.deepEqual((await store.booksInStatus(['queued'])).map((x) => x.id), [b.id, other.id]);
    t.is(await store.countBooksInStatus(['queued', 'rendering']), 2);
    t.is(await store.countBooksInStatus([]), 0);
  });

  it('a book update applies only when its condition holds, and never erases a field it does not name', async (store, t) => {
    const book = newBook({ status: 'queued', author: 'Tác giả' });
    await store.createBook(book);
    t.is(await store.updateBook(book.id, { status: 'rendering' }, { status: ['draft'] }), null);
    t.is(await store.updateBook(book.id, { status: 'rendering' }, { version: 3 }), null);
    const updated = await store.updateBook(book.id, { status: 'rendering', author: undefined, waitingReason: 'gpu_busy' }, { status: ['queued'], version: 0 });
    t.like(updated, { status: 'rendering', author: 'Tác giả', waitingReason: 'gpu_busy' });
    t.deepEqual(await store.getBook(book.id), updated);
    t.is(await store.updateBook('abk_missing', { status: 'queued' }), null);
  });

  it('a chapter is added with its script when the book is at the expected version; the version moves on with the book patch', async (store, t) => {
    const book = newBook();
    await store.createBook(book);
    const chapter = newChapter(book.id, 1, { segments: 3 });
    t.true(await store.addChapter({ bookId: book.id, expectVersion: 0, chapter, segments: segs(0, 3), bookPatch: { cast: [] } }));
    t.false(await store.addChapter({ bookId: book.id, expectVersion: 0, chapter: newChapter(book.id, 2), segments: segs(0, 1) }), 'stale version');
    t.like(await store.getBook(book.id), { version: 1, cast: [] });
    t.deepEqual(await store.getChapter(book.id, 1), chapter);
    t.is(await store.getChapter(book.id, 2), null);
    t.deepEqual(await store.readSegments(book.id, 1, 0, 3), segs(0, 3));
    t.deepEqual(await store.readSegments(book.id, 1, 1, 2), segs(1, 1));
    t.deepEqual(await store.readSegments(book.id, 1, 3, 10), []);
    t.true(await store.addChapter({ bookId: book.id, expectVersion: 1, chapter: newChapter(book.id, 2), segments: segs(0, 2) }));
    t.deepEqual((await store.listChapters(book.id)).map((c) => c.index), [1, 2]);
  });

  it('segments are appended only to a chapter not yet started that still has the expected count', async (store, t) => {
    const book = newBook();
    await store.createBook(book);
    await store.addChapter({ bookId: book.id, expectVersion: 0, chapter: newChapter(book.id, 1, { segments: 2 }), segments: segs(0, 2) });
    const patch = { segments: 4, characters: 180, contentHash: 'h1b' };
    t.false(await store.appendSegments({ bookId: book.id, expectVersion: 1, index: 1, expectSegments: 3, segments: segs(2, 2), patch }), 'wrong count');
    t.false(await store.appendSegments({ bookId: book.id, expectVersion: 0, index: 1, expectSegments: 2, segments: segs(2, 2), patch }), 'stale version');
    t.deepEqual(await store.readSegments(book.id, 1, 0, 10), segs(0, 2), 'a refused append leaves the script as it was');
    t.true(await store.appendSegments({ bookId: book.id, expectVersion: 1, index: 1, expectSegments: 2, segments: segs(2, 2), patch, bookPatch: { title: 'Mới' } }));
    t.like(await store.getChapter(book.id, 1), patch);
    t.like(await store.getBook(book.id), { version: 2, title: 'Mới' });
    t.deepEqual(await store.readSegments(book.id, 1, 0, 10), segs(0, 4));
    await store.updateChapter(book.id, 1, { status: 'rendering', attempt: 1 });
    t.false(await store.appendSegments({ bookId: book.id, expectVersion: 2, index: 1, expectSegments: 4, segments: segs(4, 1), patch: { segments: 5 } }), 'started');
    t.false(await store.appendSegments({ bookId: book.id, expectVersion: 2, index: 9, expectSegments: 0, segments: segs(0, 1), patch: {} }), 'no such chapter');
  });

  it('chapter updates are conditional on status, attempt, dispatch, lease owner and a claimable lease', async (store, t) => {
    const book = newBook();
    await store.createBook(book);
    await store.addChapter({ bookId: book.id, expectVersion: 0, chapter: newChapter(book.id, 1, { status: 'rendering', attempt: 2, dispatch: 'queued', dispatchSeq: 5 }), segments: segs(0, 2) });
    t.is(await store.updateChapter(book.id, 1, { error: 'x' }, { status: ['pending'] }), null);
    t.is(await store.updateChapter(book.id, 1, { error: 'x' }, { attempt: 1 }), null);
    t.is(await store.updateChapter(book.id, 1, { error: 'x' }, { dispatchSeq: 4 }), null);
    t.is(await store.updateChapter(book.id, 1, { error: 'x' }, { dispatch: ['running', null] }), null);
    t.is(await store.updateChapter(book.id, 1, { error: 'x' }, { leaseOwner: 'w1' }), null);
    const claim = (owner: string, now: string) => store.updateChapter(book.id, 1, { dispatch: 'running', leaseOwner: owner, leaseUntil: at(30) },
      { status: ['rendering'], attempt: 2, dispatchSeq: 5, dispatch: ['queued', 'running'], claimableBy: { owner, now } });
    t.like(await claim('w1', at(0)), { leaseOwner: 'w1', dispatch: 'running', leaseUntil: at(30) });
    t.is(await claim('w2', at(10)), null, 'a live lease of another worker');
    t.like(await claim('w1', at(10)), { leaseOwner: 'w1' }, 'its own lease');
    t.like(await claim('w2', at(30)), { leaseOwner: 'w2' }, 'a lapsed lease');
    t.like(await store.updateChapter(book.id, 1, { parts: [{ samples: 10, renderedAt: NOW, attempt: 2 }, null] }, { leaseOwner: 'w2', status: ['rendering'] }), {
      parts: [{ samples: 10, renderedAt: NOW, attempt: 2 }, null],
    });
    t.is(await store.updateChapter(book.id, 7, { error: 'x' }), null);
  });

  it('bulk chapter updates change only the matching chapters of one book, and chapters are found by status across books', async (store, t) => {
    const a = newBook();
    const b = newBook();
    await store.createBook(a);
    await store.createBook(b);
    await store.addChapter({ bookId: a.id, expectVersion: 0, chapter: newChapter(a.id, 1, { status: 'completed' }), segments: segs(0, 1) });
    await store.addChapter({ bookId: a.id, expectVersion: 1, chapter: newChapter(a.id, 2), segments: segs(0, 1) });
    await store.addChapter({ bookId: a.id, expectVersion: 2, chapter: newChapter(a.id, 3, { status: 'failed', failures: 3 }), segments: segs(0, 1) });
    await store.addChapter({ bookId: b.id, expectVersion: 0, chapter: newChapter(b.id, 1), segments: segs(0, 1) });
    t.is(await store.updateChapters(a.id, { status: 'cancelled', retryAt: null }, { status: ['pending'] }), 1);
    t.deepEqual((await store.listChapters(a.id)).map((c) => c.status), ['completed', 'cancelled', 'failed']);
    t.is((await store.getChapter(b.id, 1))!.status, 'pending', 'another book is untouched');
    t.is(await store.updateChapters(a.id, { status: 'pending', failures: 0 }, { status: ['failed', 'cancelled'] }), 2);
    const pending = await store.chaptersInStatus(['pending']);
    t.deepEqual(pending.map((c) => `${c.bookId}:${c.index}`).sort(), [`${a.id}:2`, `${a.id}:3`, `${b.id}:1`].sort());
    t.is((await store.getChapter(a.id, 3))!.failures, 0);
  });

  it('the library and notifications are idempotent per id, newest first, per account', async (store, t) => {
    const entry = (i: number, accountId = 'acc_1') => ({
      id: `abk_1:${i}`, accountId, bookId: 'abk_1', bookTitle: 'Sách', author: null, chapterIndex: i, title: `Chương ${i}`,
      audioKey: `audiobooks/abk_1/${i}.mp3`, audioFormat: 'mp3' as const, durationSeconds: 12.5, completedAt: at(i),
    });
    await store.addToLibrary(entry(1));
    await store.addToLibrary(entry(2));
    await store.addToLibrary({ ...entry(1), title: 'changed' });
    await store.addToLibrary({ ...entry(3, 'acc_2'), id: 'abk_2:3' });
    t.deepEqual(await store.listLibrary('acc_1', { offset: 0, limit: 10 }), { items: [entry(2), entry(1)], total: 2 });
    t.deepEqual((await store.listLibrary('acc_1', { offset: 1, limit: 1 })).items, [entry(1)]);
    const note = (i: number) => ({ id: `ntf_${i}`, accountId: 'acc_1', kind: 'audiobook.completed' as const, message: `m${i}`, bookId: 'abk_1', createdAt: at(i) });
    await store.addNotification(note(1));
    await store.addNotification(note(2));
    await store.addNotification({ ...note(1), message: 'again' });
    t.deepEqual(await store.listNotifications('acc_1', 10), [note(2), note(1)]);
    t.deepEqual(await store.listNotifications('acc_1', 1), [note(2)]);
    t.deepEqual(await store.listNotifications('acc_2', 10), []);
  });

  it('a named lease is held by one owner until it lapses', async (store, t) => {
    t.true(await store.takeLease('scheduler', 'a', at(10), at(0)));
    t.true(await store.takeLease('scheduler', 'a', at(20), at(5)), 'renewed by its owner');
    t.false(await store.takeLease('scheduler', 'b', at(30), at(19)));
    t.true(await store.takeLease('scheduler', 'b', at(40), at(20)), 'taken once lapsed');
    t.false(await store.takeLease('scheduler', 'a', at(50), at(21)));
    t.true(await store.takeLease('other', 'a', at(50), at(21)), 'leases are per name');
  });
}

storeContract('sqlite (memory)', async () => {
  const db = openMemoryDb();
  return { store: createSqliteAudiobookStore(db, 'audiobooks_'), close: async () => void db.close() };
});

const mongoUrl = process.env.MONGODB_URL;
if (mongoUrl) {
  const client = new MongoClient(mongoUrl);
  test.after.always(() => client.close());
  storeContract('mongo', async () => {
    const db = client.db(`contract_audiobooks_${randomUUID().slice(0, 8)}`);
    const store = await createMongoAudiobookStore(db, 'audiobooks_');
    return { store, close: async () => void (await db.dropDatabase()) };
  });
} else {
  console.log('audiobook store contract: MongoDB adapter skipped, MONGODB_URL is not set');
}
