import test from 'ava';
import { openMemoryDb } from '../../core/adapters/embedded-db.ts';
import { createSqliteAudiobookStore } from '../../plugins/audiobooks/store/sqlite.ts';
import { failAttempt, MAX_FAILURES, type AttemptDeps } from '../../plugins/audiobooks/attempts.ts';
import { bookRecord, chapterRecord } from '../helpers/audiobook-records.ts';
import type { Charge } from '../../core/ports/charge.ts';
import type { BillingService } from '../../core/billing/service.ts';
import { createLogger } from '../../core/logger.ts';

/** A chapter's failed render attempt (plugins/audiobooks/attempts.ts): refunded, retried, final at the third counted failure. */
const NOW = '2026-11-27T10:00:00.000Z';

async function rendering() {
  const store = createSqliteAudiobookStore(openMemoryDb(), 'audiobooks_');
  const book = bookRecord(NOW);
  const chapter = chapterRecord(book, NOW);
  await store.createBook(book);
  await store.addChapter({ bookId: book.id, expectVersion: 0, chapter, segments: [{ position: 0, speaker: null, text: 'Đoạn', sceneBreak: false }] });
  const refunds: Charge[] = [];
  const deps: AttemptDeps = {
    store, retryMs: 0, logger: createLogger('silent'),
    billing: { refund: async (charge: Charge) => void refunds.push(charge) } as unknown as BillingService,
  };
  /** Starts attempt `n` (charged) and fails it. */
  const failOnce = async (n: number, outage: boolean) => {
    const charge = { id: `chg_${n}`, tokens: 100 } as Charge;
    const started = await store.updateChapter(book.id, 1, { status: 'rendering', attempt: n, charge }, {});
    await failAttempt(deps, started!, outage ? 'ENOSPC: no space left on device, write' : 'espeak-ng exited with 1', { attempt: n }, outage);
    return store.getChapter(book.id, 1);
  };
  return { failOnce, refunds };
}

test('a render attempt cut by a store outage is refunded and retried without counting: outages never fail a chapter', async (t) => {
  const { failOnce, refunds } = await rendering();
  let chapter;
  for (let n = 1; n <= MAX_FAILURES + 2; n++) chapter = await failOnce(n, true);
  t.like(chapter, { status: 'pending', failures: 0, refundDue: null });
  t.is(refunds.length, MAX_FAILURES + 2, 'every attempt refunded');
});

test('failures of the render itself still count: the third is final', async (t) => {
  const { failOnce } = await rendering();
  t.like(await failOnce(1, false), { status: 'pending', failures: 1 });
  t.like(await failOnce(2, true), { status: 'pending', failures: 1 }, 'an outage between them does not count');
  t.like(await failOnce(3, false), { status: 'pending', failures: 2 });
  t.like(await failOnce(4, false), { status: 'failed', failures: 3 });
});
