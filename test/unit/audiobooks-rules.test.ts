import test from 'ava';
import { DomainError } from '../../core/errors.ts';
import { priceTokens } from '../../core/billing/pricing.ts';
import type { Grant } from '../../core/ports/documents.ts';
import {
  chapterCharacters, checkBookLimits, checkSpeakers, contentHash, endingWords, mergeCast, repeatsTail, segmentMismatch, LIMITS,
} from '../../plugins/audiobooks/rules.ts';
import { budgetsOf, chapterCharsMax, charsWithin, insufficientTokens, weighChapters } from '../../plugins/audiobooks/weighing.ts';
import { lastTurnByAccount, nextChapter, turnOrder } from '../../plugins/audiobooks/scheduler/turns.ts';
import type { BookRecord, ChapterRecord } from '../../plugins/audiobooks/store/records.ts';

const priceOf = (characters: number) => priceTokens({ characters, engineMultiplier: 3, globalMultiplier: 1.3, aiRefine: false, aiRefineSurchargePerChar: 0 });
const seg = (text: string, speaker: string | null = null, sceneBreak = false) => ({ text, speaker, sceneBreak });

test('a chapter is billed for the NFC characters of its title and every segment', (t) => {
  // "ê" written as e + combining circumflex is two code points before NFC, one after.
  t.is(chapterCharacters('Tiêu đề', [seg('Chào'), seg('be\u0302')]), 7 + 4 + 2);
});

test('duplicate detection: the same title and script hash alike; any change of text, speaker or scene does not', (t) => {
  const base = contentHash('Chương 1', [seg('A'), seg('B', 'Lan')]);
  t.is(contentHash('Chương 1', [seg('A'), seg('B', 'Lan')]), base);
  t.not(contentHash('Chương 2', [seg('A'), seg('B', 'Lan')]), base);
  t.not(contentHash('Chương 1', [seg('A'), seg('B')]), base);
  t.not(contentHash('Chương 1', [seg('A'), seg('B', 'Lan', true)]), base);
  t.not(contentHash('Chương 1', [seg('AB')]), contentHash('Chương 1', [seg('A'), seg('B')]));
});

test('repeating the chapter\'s last segments is recognised; a different ending is not', (t) => {
  t.true(repeatsTail([seg('x'), seg('y', 'Lan')], [seg('x'), seg('y', 'Lan')]));
  t.false(repeatsTail([seg('x'), seg('y')], [seg('x'), seg('z')]));
  t.false(repeatsTail([seg('y')], [seg('x'), seg('y')]));
});

test('segment_mismatch shows the real count and the words the chapter ends with', (t) => {
  t.is(endingWords('một hai ba'), 'một hai ba');
  t.is(endingWords(Array.from({ length: 20 }, (_, i) => `w${i}`).join(' ')), '… ' + Array.from({ length: 12 }, (_, i) => `w${i + 8}`).join(' '));
  const err = segmentMismatch(3, 5, 4, { position: 4, speaker: null, text: 'và cô bé mỉm cười.', sceneBreak: false });
  t.is(err.kind, 'conflict');
  t.is(err.code, 'segment_mismatch');
  t.like(err.details.extra, { segments: 5, endsWith: 'và cô bé mỉm cười.' });
  t.regex(err.message, /has 5 segments, not 4.*và cô bé mỉm cười/);
});

test('SPEC limits: 200 chapters and 1,500,000 characters per book', (t) => {
  t.notThrows(() => checkBookLimits({ chapters: LIMITS.chapters, bookCharacters: LIMITS.bookChars }));
  t.is((t.throws(() => checkBookLimits({ chapters: 201, bookCharacters: 10 })) as DomainError).code, 'too_many_chapters');
  t.is((t.throws(() => checkBookLimits({ chapters: 2, bookCharacters: 1_500_001 })) as DomainError).code, 'book_too_long');
});

test('the cast: new speakers join, a speaker keeps its voice, at most 30; segments name cast speakers only', (t) => {
  const cast = mergeCast([{ speaker: 'Lan', voiceId: 'a' }], [{ speaker: 'Lan', voiceId: 'a' }, { speaker: 'Nam', voiceId: 'b' }]);
  t.deepEqual(cast.map((c) => c.speaker), ['Lan', 'Nam']);
  t.is((t.throws(() => mergeCast(cast, [{ speaker: 'Lan', voiceId: 'b' }])) as DomainError).code, 'cast_conflict');
  const thirty = Array.from({ length: 30 }, (_, i) => ({ speaker: `s${i}`, voiceId: 'a' }));
  t.notThrows(() => mergeCast([], thirty));
  t.is((t.throws(() => mergeCast(thirty, [{ speaker: 'one more', voiceId: 'a' }])) as DomainError).code, 'too_many_voices');
  t.notThrows(() => checkSpeakers(cast, [seg('x'), seg('y', 'Nam')]));
  const unknown = t.throws(() => checkSpeakers(cast, [seg('y', 'Hoa'), seg('z', 'Hoa')])) as DomainError;
  t.is(unknown.code, 'unknown_speaker');
  t.deepEqual(unknown.details.extra, { speakers: ['Hoa'] });
});

const grant = (id: string, overrides: Partial<Grant> = {}): Grant => ({
  id, accountId: 'acc', plan: 'pro', totalTokens: 10_000, usedTokens: 0, dailyCap: null, weeklyCap: null, dayKey: null, dayUsed: 0,
  weekKey: null, weekUsed: 0, expiresAt: null, isGift: false, engines: ['v4'], status: 'active', createdAt: '2026-01-01T00:00:00.000Z', ...overrides,
});
const NOW = new Date('2026-11-21T10:00:00.000Z');

test('budgets: the key\'s own grant first, then the others oldest first; a cap bounds one chapter, not the book', (t) => {
  const own = grant('g_own', { createdAt: '2026-03-01T00:00:00.000Z', dailyCap: 2000, weeklyCap: 5000, dayUsed: 1900 });
  const old = grant('g_old', { createdAt: '2026-01-01T00:00:00.000Z', usedTokens: 9000 });
  const gift = grant('g_gift', { createdAt: '2026-02-01T00:00:00.000Z', isGift: true, dailyCap: 10 });
  const expired = grant('g_exp', { expiresAt: '2026-11-01T00:00:00.000Z' });
  const otherEngine = grant('g_v9', { engines: ['v9'] });
  t.deepEqual(budgetsOf(own, [own, old, gift, expired, otherEngine], 'v4', NOW), [
    { grantId: 'g_own', left: 10_000, ceiling: 2000 },
    { grantId: 'g_old', left: 1000, ceiling: Infinity },
    { grantId: 'g_gift', left: 10_000, ceiling: Infinity },
  ]);
});

test('start weighs chapter by chapter: 402 names the chapter no grant can pay, with its estimate and the most one grant would have left', (t) => {
  const budgets = [{ grantId: 'a', left: 1000, ceiling: Infinity }, { grantId: 'b', left: 1000, ceiling: Infinity }];
  const chapters = [{ index: 1, title: 'Một', tokens: 700 }, { index: 2, title: 'Hai', tokens: 700 }, { index: 3, title: 'Ba', tokens: 500 }];
  const w = weighChapters(chapters, budgets);
  t.like(w, { ok: false, required: 500, remaining: 300, chapter: { index: 3 } });
  const err = insufficientTokens(w as Extract<typeof w, { ok: false }>);
  t.is(err.kind, 'payment_required');
  t.is(err.code, 'insufficient_tokens');
  t.like(err.details, { required: 500, remaining: 300, extra: { chapter: 3, chapterTitle: 'Ba' } });
  t.deepEqual(weighChapters(chapters.slice(0, 2), budgets), { ok: true, total: 1400 });
});

test('start weighing: a total larger than every grant holds is refused without naming a chapter; caps bound each chapter', (t) => {
  const w = weighChapters([{ index: 1, title: 'x', tokens: 600 }, { index: 2, title: 'y', tokens: 600 }], [{ grantId: 'a', left: 1000, ceiling: Infinity }]);
  t.like(w, { ok: false, chapter: null, required: 1200, remaining: 1000 });
  const capped = weighChapters([{ index: 1, title: 'x', tokens: 600 }, { index: 2, title: 'y', tokens: 600 }], [{ grantId: 'a', left: 5000, ceiling: 1000 }]);
  t.true(capped.ok, 'each chapter fits the daily cap; the book spreads over days');
  t.like(weighChapters([{ index: 1, title: 'x', tokens: 1200 }], [{ grantId: 'a', left: 5000, ceiling: 1000 }]), { ok: false, chapter: { index: 1 }, remaining: 1000 });
});

test('chapterCharsMax: the longest chapter a cap can pay; 60000 without a tighter cap', (t) => {
  t.is(charsWithin(1000, priceOf), 256);
  t.true(priceOf(256) <= 1000 && priceOf(257) > 1000);
  t.is(charsWithin(100, priceOf), 0, 'a cap below the 50-character minimum pays nothing');
  t.is(charsWithin(Infinity, priceOf), Infinity);
  t.is(chapterCharsMax([{ grantId: 'a', left: 5, ceiling: Infinity }], priceOf), 60_000);
  t.is(chapterCharsMax([{ grantId: 'a', left: 5, ceiling: 1000 }], priceOf), 256);
  t.is(chapterCharsMax([{ grantId: 'a', left: 5, ceiling: 1000 }, { grantId: 'b', left: 5, ceiling: 2000 }], priceOf), 512);
  t.is(chapterCharsMax([], priceOf), 60_000);
});

const book = (id: string, accountId: string, lastTurnAt: string | null, queuedAt: string): BookRecord => ({
  id, accountId, title: id, author: null, engine: 'v4', narratorVoice: 'v', cast: [], status: 'queued', waitingReason: null, error: null,
  payerKeyId: 'k', payerGrantId: 'g', version: 0, run: 1, lastTurnAt, queuedAt, quotaRetryAt: null, createdAt: queuedAt, completedAt: null,
});
const chapter = (index: number, status: ChapterRecord['status'], retryAt: string | null = null) => ({ index, status, retryAt, refundDue: null }) as ChapterRecord;

test('books take turns a chapter each: the account served longest ago goes first, then its books the same way', (t) => {
  const a1 = book('a1', 'A', '2026-11-21T10:00:05Z', '2026-11-21T09:00:00Z');
  const a2 = book('a2', 'A', null, '2026-11-21T09:30:00Z');
  const b1 = book('b1', 'B', '2026-11-21T10:00:01Z', '2026-11-21T09:10:00Z');
  const c1 = book('c1', 'C', null, '2026-11-21T09:50:00Z');
  const order = turnOrder([a1, a2, b1, c1].map((b) => ({ book: b, chapter: chapter(1, 'pending') })), lastTurnByAccount([a1, a2, b1, c1]));
  t.deepEqual(order.map((c) => c.book.id), ['c1', 'b1', 'a2', 'a1']);
});

test('a book renders its lowest pending chapter that is due; one waiting for its retry time is passed over', (t) => {
  const now = '2026-11-21T10:00:00.000Z';
  t.is(nextChapter([chapter(1, 'completed'), chapter(2, 'pending', '2026-11-21T10:05:00.000Z'), chapter(3, 'pending')], now)!.index, 3);
  t.is(nextChapter([chapter(1, 'pending', '2026-11-21T09:59:00.000Z')], now)!.index, 1);
  t.is(nextChapter([chapter(1, 'failed'), chapter(2, 'cancelled')], now), null);
});
