import test from 'ava';
import { openMemoryDb } from '../../core/adapters/embedded-db.ts';
import { createSqliteAudiobookStore } from '../../plugins/audiobooks/store/sqlite.ts';
import { dispatchChapter, type DispatchDeps } from '../../plugins/audiobooks/scheduler/dispatch.ts';
import { bookRecord, chapterRecord } from '../helpers/audiobook-records.ts';
import type { BillingService } from '../../core/billing/service.ts';
import type { Charge } from '../../core/ports/charge.ts';
import type { Documents } from '../../core/ports/documents.ts';
import { createLogger } from '../../core/logger.ts';

/** SPEC Billing rule 1 for audiobooks: a chapter is charged for exactly the script that is rendered. */
const NOW = '2026-11-29T10:00:00.000Z';

test('text appended after the scheduler read a chapter, before it took the chapter, is priced in: the charge is the price of the chapter as taken', async (t) => {
  const store = createSqliteAudiobookStore(openMemoryDb(), 'audiobooks_');
  const book = bookRecord(NOW, { status: 'queued' });
  const chapter = chapterRecord(book, NOW);
  await store.createBook(book);
  await store.addChapter({ bookId: book.id, expectVersion: 0, chapter, segments: [{ position: 0, speaker: null, text: 'Đoạn', sceneBreak: false }] });
  const read = await store.getChapter(book.id, 1);
  // An append lands between the scheduler's read and its take.
  t.true(await store.appendSegments({
    bookId: book.id, expectVersion: (await store.getBook(book.id))!.version, index: 1, expectSegments: 1,
    segments: [{ position: 1, speaker: null, text: 'Đoạn thêm', sceneBreak: false }], patch: { characters: 400, segments: 2 }, bookPatch: {},
  }));
  const charged: number[] = [];
  const deps: DispatchDeps = {
    store, logger: createLogger('silent'), documents: {} as Documents, publisher: { publish: async () => {} } as unknown as DispatchDeps['publisher'],
    billing: { charge: async (input: { tokens: number }) => { charged.push(input.tokens); return { id: 'chg_1', tokens: input.tokens } as Charge; } } as unknown as BillingService,
  };
  const result = await dispatchChapter(deps, book, read!, (characters) => characters * 3);
  t.is(result.kind, 'dispatched');
  t.deepEqual(charged, [1200], 'priced from the 400 characters that will be rendered, not the 100 read before');
  t.like(await store.getChapter(book.id, 1), { status: 'rendering', characters: 400, segments: 2 });
});
