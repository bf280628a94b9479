import test, { type ExecutionContext } from 'ava';
import type { TestPlatform } from '../helpers/platform.ts';
import { coreServices } from '../../core/services.ts';
import type { PcmChunk, SynthesisRequest } from '../../core/ports/engine.ts';
import { tapEngine, sleep, type EngineTap } from '../helpers/engine-tap.ts';
import { waitFor } from '../helpers/wait.ts';
import { reconcileAll } from '../../core/billing/reconciliation.ts';
import {
  addChapter, call, chapterPrice, createBook, decodeSamples, ebur128, edgeSilences, getBook, grantUsed, probeTags, prose,
  startAudiobookPlatform, waitForBook, type Segment,
} from '../helpers/audiobooks.ts';

/**
 * Rendering, scheduling and delivery of audiobooks on the real platform (all
 * roles in one process, espeak-ng). The engine is tapped to see which texts
 * are rendered and in what order, and to hold, slow or fail some of them.
 * One render slot, so the order of chapters is the scheduler's alone.
 */
let p: TestPlatform;
let tap: EngineTap | null = null;
test.before(async () => {
  p = await startAudiobookPlatform({ AUDIOBOOK_STALL_SECONDS: '6' });
});
test.after.always(() => p?.stop());
test.afterEach.always(() => {
  tap?.restore();
  tap = null;
  // A test that failed before opening its gate must not leave a render waiting on it: the
  // platform's stop would wait for that render (as it does for real work) and never end.
  for (const g of gates.splice(0)) g.open();
});

async function useTap(behaviour: Parameters<typeof tapEngine>[1]): Promise<EngineTap> {
  tap = tapEngine(await p.platform.service(coreServices.engine), behaviour);
  return tap;
}

const start = (key: string, bookId: string) => call(p, key, 'POST', `/audiobooks/${bookId}/start`);
const reconcile = async (grantId: string) => (await p.admin(`/grants/${grantId}/reconcile`)).json() as Promise<Record<string, number | boolean>>;
/** Waits for the ledger writer to have every charge and refund of the grant. */
const ledgerOf = (grantId: string, charged: number, refunded = 0) => waitFor(async () => {
  const r = await reconcile(grantId);
  return r.ledgerCharged === charged && r.ledgerRefunded === refunded ? r : null;
}, { what: `ledger of ${grantId} to show ${charged} charged, ${refunded} refunded` });

/** A gate: requests whose text contains `mark` wait until `open()`. */
const gates: Array<{ open: () => void }> = [];
function gate(mark: string) {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  gates.push({ open });
  const behaviour = async function* (request: SynthesisRequest, real: (r: SynthesisRequest) => AsyncIterable<PcmChunk>) {
    if (request.text.includes(mark)) await opened;
    yield* real(request);
  };
  return { behaviour, open };
}

test.serial('SPEC Output: each chapter is an MP3 (128 kbps, mono, 48 kHz, ID3 tags) at -19 LUFS, peaks under -3 dBTP, 0.5 s before and 3.5 s after; library and notification', async (t) => {
  const acct = await p.bootstrap();
  const book = await createBook(p, acct.apiKey, { title: 'Truyện ngắn', author: 'Nguyễn Du', cast: [{ speaker: 'Lan', voiceId: 'vi-south-female-lan' }] });
  const s1: Segment[] = [{ text: prose('Mở đầu', 2) }, { text: 'Chào chị, hôm nay trời đẹp quá!', speaker: 'Lan' }, { text: prose('Cảnh sau', 1), sceneBreak: true }];
  const s2: Segment[] = [{ text: prose('Kết thúc', 2) }];
  await addChapter(p, acct.apiKey, book.id, 'Chương một', s1);
  await addChapter(p, acct.apiKey, book.id, 'Chương hai', s2);
  t.is((await start(acct.apiKey, book.id)).status, 200);
  const done = await waitForBook(p, acct.apiKey, book.id, ['completed', 'partial', 'failed']);
  t.is(done.status, 'completed');
  t.truthy(done.completedAt);
  const prices = [chapterPrice('Chương một', s1), chapterPrice('Chương hai', s2)];
  t.like(done.totals, { chapters: 2, completedChapters: 2, estimatedTokens: 0, tokensCharged: prices[0]! + prices[1]! });
  t.deepEqual(done.chapters.map((c: any) => c.tokenCost), prices);

  for (const chapter of done.chapters) {
    t.like(chapter, { status: 'completed', audioFormat: 'mp3', error: null });
    t.is(chapter.progress.partsDone, chapter.progress.partsPlanned);
    const res = await fetch(chapter.audioUrl);
    t.is(res.headers.get('content-type'), 'audio/mpeg');
    const mp3 = Buffer.from(await res.arrayBuffer());
    const probe = await probeTags(mp3);
    t.like(probe, { codec: 'mp3', sampleRate: 48000, channels: 1 });
    t.true(Math.abs(probe.bitRate - 128000) < 1000, `bit rate ${probe.bitRate}`);
    t.like(probe.tags, { title: chapter.title, album: 'Truyện ngắn', artist: 'Nguyễn Du', track: String(chapter.index) });
    const loudness = await ebur128(mp3);
    t.true(Math.abs(loudness.integrated + 19) <= 0.5, `integrated ${loudness.integrated} LUFS`);
    t.true(loudness.truePeak <= -3.0, `true peak ${loudness.truePeak} dBTP`);
    const edges = edgeSilences(await decodeSamples(mp3));
    // The decoder adds about 25 ms before and the encoder pads the end; the speech's own 10 ms fades are kept.
    t.true(edges.lead >= 0.48 && edges.lead <= 0.6, `lead ${edges.lead}`);
    t.true(edges.tail >= 3.45 && edges.tail <= 3.65, `tail ${edges.tail}`);
    t.true(Math.abs(chapter.durationSeconds - (await decodeSamples(mp3)).length / 48000) < 0.2);
  }
  t.true(done.totals.durationSeconds > 8);

  const library = (await call(p, acct.apiKey, 'GET', '/library')).body;
  t.is(library.total, 2);
  t.deepEqual(library.items.map((e: any) => e.chapterIndex).sort(), [1, 2]);
  t.like(library.items.find((e: any) => e.chapterIndex === 1), { bookId: book.id, bookTitle: 'Truyện ngắn', author: 'Nguyễn Du', title: 'Chương một', audioFormat: 'mp3' });
  t.is((await fetch(library.items[0].audioUrl)).status, 200);
  const notes = (await call(p, acct.apiKey, 'GET', '/library/notifications')).body.items;
  t.is(notes.length, 1);
  t.like(notes[0], { kind: 'audiobook.completed', bookId: book.id });
  t.is(await grantUsed(p, acct.grantId), prices[0]! + prices[1]!);
  t.like(await ledgerOf(acct.grantId, prices[0]! + prices[1]!), { balanced: true });

  // A chapter added to the finished book reopens it; finishing again is a run of its own, with its own notification.
  await addChapter(p, acct.apiKey, book.id, 'Chương ba', [{ text: prose('Phần thêm', 1) }]);
  const again = await waitForBook(p, acct.apiKey, book.id, ['completed', 'partial', 'failed']);
  t.like(again.totals, { chapters: 3, completedChapters: 3 });
  const after = (await call(p, acct.apiKey, 'GET', '/library/notifications')).body.items;
  t.is(after.length, 2, 'one notification per finished run');
  t.true(after.every((n: any) => n.kind === 'audiobook.completed' && n.bookId === book.id));
  t.regex(after.map((n: any) => n.message).join(' | '), /3 chapters/);
});

test.serial('two books of two accounts interleave chapter by chapter', async (t) => {
  const order: string[] = [];
  await useTap((request, real) => {
    const title = /^(Alpha|Bravo) (một|hai|ba)$/.exec(request.text.trim());
    if (title) order.push(title[0]);
    return real(request);
  });
  const a = await p.bootstrap();
  const b = await p.bootstrap();
  const bookA = await createBook(p, a.apiKey, { title: 'A' });
  const bookB = await createBook(p, b.apiKey, { title: 'B' });
  for (const n of ['một', 'hai', 'ba']) {
    await addChapter(p, a.apiKey, bookA.id, `Alpha ${n}`, [{ text: prose(`A ${n}`, 1) }]);
    await addChapter(p, b.apiKey, bookB.id, `Bravo ${n}`, [{ text: prose(`B ${n}`, 1) }]);
  }
  await start(a.apiKey, bookA.id);
  await start(b.apiKey, bookB.id);
  const waiting = await waitFor(async () => {
    const other = await getBook(p, b.apiKey, bookB.id);
    return other.otherBooksWaiting === 1 ? other : null;
  }, { intervalMs: 100, what: 'both books started' });
  t.is(waiting.otherBooksWaiting, 1);
  await waitForBook(p, a.apiKey, bookA.id, ['completed']);
  await waitForBook(p, b.apiKey, bookB.id, ['completed']);
  t.deepEqual(order, ['Alpha một', 'Bravo một', 'Alpha hai', 'Bravo hai', 'Alpha ba', 'Bravo ba']);
});

test.serial('books render only while no API work waits: a queued POST /tts job holds them (gpu_busy); they resume after', async (t) => {
  const jobGate = gate('khoá chặn');
  const bookTexts: string[] = [];
  await useTap((request, real) => {
    if (request.text.includes('Gamma')) bookTexts.push(request.text);
    return jobGate.behaviour(request, real);
  });
  const acct = await p.bootstrap();
  const job = await call(p, acct.apiKey, 'POST', '/tts', { text: 'Đây là khoá chặn của một công việc API.' });
  t.is(job.status, 201);
  const book = await createBook(p, acct.apiKey);
  await addChapter(p, acct.apiKey, book.id, 'Gamma một', [{ text: prose('Gamma', 2) }]);
  await start(acct.apiKey, book.id);
  const held = await waitFor(async () => {
    const b = await getBook(p, acct.apiKey, book.id);
    return b.waitingReason === 'gpu_busy' ? b : null;
  }, { intervalMs: 100, what: 'the book to wait on gpu_busy' });
  t.is(held.status, 'queued');
  await sleep(500);
  t.deepEqual(bookTexts, [], 'nothing of the book rendered while the job waited');
  jobGate.open();
  const done = await waitForBook(p, acct.apiKey, book.id, ['completed']);
  t.is(done.waitingReason, null);
  t.true(bookTexts.length > 0);
  t.is((await call(p, acct.apiKey, 'GET', `/tts/${job.body.jobId}`)).body.status, 'completed');
});

test.serial('API work arriving mid-chapter pauses it after the current part; it resumes after without rendering a part twice', async (t) => {
  const jobGate = gate('khoá chặn');
  const bookTexts: string[] = [];
  await useTap(async function* (request, real) {
    if (request.text.includes('Delta')) {
      bookTexts.push(request.text);
      await sleep(150);
    }
    yield* jobGate.behaviour(request, real);
  });
  const acct = await p.bootstrap();
  const book = await createBook(p, acct.apiKey);
  const segments = Array.from({ length: 8 }, (_, i) => ({ text: `Delta đoạn số ${i + 1} kể chuyện làng quê yên bình.` }));
  await addChapter(p, acct.apiKey, book.id, 'Delta', segments);
  await start(acct.apiKey, book.id);
  await waitFor(async () => (await getBook(p, acct.apiKey, book.id)).chapters?.[0].progress?.partsDone >= 1, { intervalMs: 50, what: 'a first part' });
  t.is((await call(p, acct.apiKey, 'POST', '/tts', { text: 'Đây là khoá chặn của một công việc API khác.' })).status, 201);
  const paused = await waitFor(async () => {
    const b = await getBook(p, acct.apiKey, book.id);
    return b.waitingReason === 'gpu_busy' ? b : null;
  }, { intervalMs: 100, what: 'the chapter to pause' });
  t.is(paused.chapters[0].status, 'rendering');
  const doneBefore = (await getBook(p, acct.apiKey, book.id)).chapters[0].progress.partsDone;
  await sleep(600);
  const stillPaused = await getBook(p, acct.apiKey, book.id);
  t.is(stillPaused.chapters[0].progress.partsDone, doneBefore, 'no part rendered while API work waited');
  t.true(doneBefore < stillPaused.chapters[0].progress.partsPlanned);
  jobGate.open();
  const done = await waitForBook(p, acct.apiKey, book.id, ['completed']);
  t.is(done.chapters[0].tokenCost, chapterPrice('Delta', segments), 'charged once, pause or not');
  t.is(new Set(bookTexts).size, bookTexts.length, 'no text rendered twice');
  t.is(bookTexts.length, segments.length + 1);
});

test.serial('cancel mid-book: the chapter rendering finishes and is billed; chapters not started are cancelled and never billed', async (t) => {
  await useTap(async function* (request, real) {
    if (request.text.includes('Epsilon')) await sleep(120);
    yield* real(request);
  });
  const acct = await p.bootstrap();
  const book = await createBook(p, acct.apiKey);
  const chapters = [1, 2, 3].map((i) => Array.from({ length: 4 }, (_, j) => ({ text: `Epsilon chương ${i} đoạn ${j + 1} rất dài và chậm rãi.` })));
  for (const [i, segments] of chapters.entries()) await addChapter(p, acct.apiKey, book.id, `Chương ${i + 1}`, segments);
  await start(acct.apiKey, book.id);
  await waitFor(async () => (await getBook(p, acct.apiKey, book.id)).chapters?.[0].progress?.partsDone >= 1, { intervalMs: 50, what: 'chapter 1 to be rendering' });
  const cancelled = await call(p, acct.apiKey, 'POST', `/audiobooks/${book.id}/cancel`);
  t.is(cancelled.status, 200);
  t.is(cancelled.body.status, 'cancelled');
  t.deepEqual(cancelled.body.chapters.map((c: any) => c.status), ['rendering', 'cancelled', 'cancelled']);
  const done = await waitFor(async () => {
    const b = await getBook(p, acct.apiKey, book.id);
    return b.chapters?.[0].status === 'completed' ? b : null;
  }, { timeoutMs: 30_000, intervalMs: 100, what: 'chapter 1 to finish' });
  const prices = chapters.map((s, i) => chapterPrice(`Chương ${i + 1}`, s));
  t.is(done.status, 'cancelled');
  t.like(done.totals, { tokensCharged: prices[0], estimatedTokens: prices[1]! + prices[2]!, completedChapters: 1 });
  await sleep(800);
  t.is(await grantUsed(p, acct.grantId), prices[0]!, 'nothing more billed');
  t.like(await ledgerOf(acct.grantId, prices[0]!), { balanced: true });
  t.deepEqual((await getBook(p, acct.apiKey, book.id)).chapters.map((c: any) => c.status), ['completed', 'cancelled', 'cancelled']);
});

test.serial('reconciliation: a book\'s chapter charges, which no request makes and usage never shows, are no usage drift; the requests still match', async (t) => {
  const acct = await p.bootstrap();
  const book = await createBook(p, acct.apiKey);
  const segments: Segment[] = [{ text: prose('Đối soát', 1) }];
  await addChapter(p, acct.apiKey, book.id, 'Chương một', segments);
  t.is((await start(acct.apiKey, book.id)).status, 200);
  t.is((await waitForBook(p, acct.apiKey, book.id, ['completed', 'partial', 'failed'])).status, 'completed');
  const speech = await p.api('/audio/speech', { method: 'POST', key: acct.apiKey, json: { model: 'tts-1', input: 'Xin chào.' } });
  t.is(speech.status, 200);
  await speech.arrayBuffer();
  const chapter = chapterPrice('Chương một', segments);
  const used = await grantUsed(p, acct.grantId);
  t.true(used > chapter, 'the grant paid the chapter and the request');
  await ledgerOf(acct.grantId, used);
  const documents = await p.platform.service(coreServices.documents);
  const analytics = await p.platform.service(coreServices.analytics);
  const usageCost = async () => (await analytics.usage({ scope: 'account', accountId: acct.accountId, keyId: null, from: new Date(Date.now() - 3_600_000), to: new Date(Date.now() + 60_000) })).totals.tokenCost;
  await waitFor(async () => (await usageCost()) === used - chapter, { what: 'usage to show the request, and only it' });

  const report = await reconcileAll({ documents, analytics }, { settleMs: 0, usageWindow: { windowMs: 3_600_000, delayMs: -60_000 } });
  const mine = report.usage!.drifts.filter((d) => d.accountId === acct.accountId);
  t.deepEqual(mine, [], 'the chapter is not usage drift');
  t.false(report.drifts.some((d) => d.grantId === acct.grantId), 'the grant adds up to its ledger, chapter included');
});

test.serial('a failed chapter is rendered again automatically, at most twice; the third failure ends the book partial; every failed attempt is refunded; a new start redoes only that chapter', async (t) => {
  await useTap(async function* (request, real) {
    if (request.text.includes('hỏng')) throw new Error('engine crashed on this text');
    yield* real(request);
  });
  const acct = await p.bootstrap();
  const book = await createBook(p, acct.apiKey);
  const s = [[{ text: prose('Zeta một', 1) }], [{ text: 'Chiếc xe hỏng giữa đường làng.' }], [{ text: prose('Zeta ba', 1) }]];
  for (const [i, segments] of s.entries()) await addChapter(p, acct.apiKey, book.id, `Chương ${i + 1}`, segments);
  const prices = s.map((segments, i) => chapterPrice(`Chương ${i + 1}`, segments));
  await start(acct.apiKey, book.id);
  const partial = await waitForBook(p, acct.apiKey, book.id, ['partial', 'completed', 'failed']);
  t.is(partial.status, 'partial');
  t.regex(partial.error, /Chapter 2/);
  t.deepEqual(partial.chapters.map((c: any) => c.status), ['completed', 'failed', 'completed']);
  t.regex(partial.chapters[1].error, /failed 3 times.*engine crashed/);
  t.is(partial.chapters[1].tokenCost, null);
  t.like(partial.totals, { tokensCharged: prices[0]! + prices[2]!, estimatedTokens: prices[1] });
  t.is(await grantUsed(p, acct.grantId), prices[0]! + prices[2]!);
  t.like(await ledgerOf(acct.grantId, prices[0]! + 3 * prices[1]! + prices[2]!, 3 * prices[1]!), { balanced: true });
  t.like((await call(p, acct.apiKey, 'GET', '/library/notifications')).body.items[0], { kind: 'audiobook.partial', bookId: book.id });

  tap!.restore();
  const rendered = await useTap((request, real) => real(request));
  const again = await start(acct.apiKey, book.id);
  t.is(again.status, 200);
  t.is(again.body.status, 'queued');
  const done = await waitForBook(p, acct.apiKey, book.id, ['completed', 'partial', 'failed']);
  t.is(done.status, 'completed');
  const texts = rendered.requests.map((r) => r.text).join(' | ');
  t.regex(texts, /hỏng/);
  t.notRegex(texts, /Zeta/, 'the chapters already done are not rendered again');
  t.is(await grantUsed(p, acct.grantId), prices[0]! + prices[1]! + prices[2]!);
});

test.serial('a chapter making no progress for the stall time counts as a failure: refunded, then rendered again', async (t) => {
  let hung = false;
  await useTap(async function* (request, real) {
    if (request.text.includes('treo') && !hung) {
      hung = true;
      await sleep(3_600_000, request.signal);
    }
    yield* real(request);
  });
  const acct = await p.bootstrap();
  const book = await createBook(p, acct.apiKey);
  const segments = [{ text: 'Máy bị treo một lúc rồi chạy tiếp.' }];
  await addChapter(p, acct.apiKey, book.id, 'Eta', segments);
  await start(acct.apiKey, book.id);
  const done = await waitForBook(p, acct.apiKey, book.id, ['completed', 'partial', 'failed'], 30_000);
  t.is(done.status, 'completed');
  t.true(hung);
  const price = chapterPrice('Eta', segments);
  t.is(await grantUsed(p, acct.grantId), price);
  t.like(await ledgerOf(acct.grantId, 2 * price, price), { balanced: true });
});

/**
 * A started two-chapter book whose grant's daily cap pays the first chapter and not both: once the first renders, the
 * book waits on quota. `label` keeps each test's text (and so its content-cache entries) its own.
 */
async function bookWaitingOnQuota(t: ExecutionContext, label: string) {
  const s1 = [{ text: prose(`${label} một`, 2) }];
  const s2 = [{ text: prose(`${label} hai`, 2) }];
  const [p1, p2] = [chapterPrice('Một', s1), chapterPrice('Hai', s2)];
  const acct = await p.bootstrap({ grant: { totalTokens: 100_000, dailyCap: p1 + p2 - 1 } });
  const book = await createBook(p, acct.apiKey);
  await addChapter(p, acct.apiKey, book.id, 'Một', s1);
  await addChapter(p, acct.apiKey, book.id, 'Hai', s2);
  t.is((await start(acct.apiKey, book.id)).status, 200, 'each chapter fits the cap: the start is accepted');
  const waiting = await waitFor(async () => {
    const b = await getBook(p, acct.apiKey, book.id);
    return b.waitingReason === 'quota' ? b : null;
  }, { timeoutMs: 30_000, intervalMs: 100, what: 'the book to wait on quota' });
  return { acct, book, waiting, p1, p2 };
}

test.serial('a book cancelled while it waits on quota keeps no stale quota message (SPEC Audiobook: waitingReason and error describe the book now)', async (t) => {
  const { acct, book, waiting } = await bookWaitingOnQuota(t, 'Iota');
  t.truthy(waiting.error, 'while it waits, the error says why');
  const cancelled = await call(p, acct.apiKey, 'POST', `/audiobooks/${book.id}/cancel`);
  t.like(cancelled.body, { status: 'cancelled', waitingReason: null, error: null });
});

test.serial('quota: a book waits on its plan\'s daily cap (retried automatically) and goes on when a grant can pay', async (t) => {
  const { acct, book, waiting, p1, p2 } = await bookWaitingOnQuota(t, 'Theta');
  t.is(waiting.chapters[1].status, 'pending');
  t.is(await grantUsed(p, acct.grantId), p1);
  const gift = await (await p.admin(`/accounts/${acct.accountId}/grants`, { method: 'POST', json: { totalTokens: 10_000, isGift: true } })).json();
  const done = await waitForBook(p, acct.apiKey, book.id, ['completed']);
  t.is(done.waitingReason, null);
  t.is(await grantUsed(p, gift.id ?? gift.grantId), p2);
});
