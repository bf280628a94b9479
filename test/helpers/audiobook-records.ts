import { randomUUID } from 'node:crypto';
import type { BookRecord, ChapterRecord } from '../../plugins/audiobooks/store/records.ts';

/** Records of the audiobook store for unit tests: a book of account `acc_1`, and its first chapter, pending. */
export function bookRecord(now: string, fields: Partial<BookRecord> = {}): BookRecord {
  return {
    id: `abk_${randomUUID()}`, accountId: 'acc_1', title: 'Sách', author: null, engine: 'v4', narratorVoice: 'vi-north-female-mai',
    cast: [], status: 'rendering', waitingReason: null, error: null, payerKeyId: 'key_1', payerGrantId: 'grt_1', version: 0, run: 1,
    lastTurnAt: null, queuedAt: now, quotaRetryAt: null, createdAt: now, completedAt: null, ...fields,
  };
}

export function chapterRecord(book: BookRecord, now: string, fields: Partial<ChapterRecord> = {}): ChapterRecord {
  return {
    bookId: book.id, accountId: book.accountId, index: 1, title: 'Chương 1', status: 'pending', characters: 100, segments: 1, contentHash: 'h1',
    partsPlanned: 1, parts: [], attempt: 0, dispatch: null, dispatchSeq: 0, leaseOwner: null, leaseUntil: null, lastProgressAt: null,
    charge: null, refundDue: null, failures: 0, retryAt: null, error: null, masterAttempts: 0, masterRetryAt: null, audioKey: null,
    audioFormat: null, durationSeconds: null, createdAt: now, startedAt: null, renderedAt: null, completedAt: null, ...fields,
  };
}
