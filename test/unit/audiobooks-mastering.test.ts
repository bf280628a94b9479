import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { Readable } from 'node:stream';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openMemoryDb } from '../../core/adapters/embedded-db.ts';
import { createDirectoryBlobs } from '../../core/adapters/blobs/directory.ts';
import { createLogger } from '../../core/logger.ts';
import { parseWavHeader } from '../../core/speechkit/audio/wav.ts';
import { createSqliteAudiobookStore } from '../../plugins/audiobooks/store/sqlite.ts';
import { createMasteringWorker, runMasteringWorker, type MasterFn } from '../../plugins/audiobooks/mastering/worker.ts';
import { masterMp3 } from '../../plugins/audiobooks/mastering/master.ts';
import { partKey } from '../../plugins/audiobooks/render/part.ts';
import type { BookRecord, ChapterRecord } from '../../plugins/audiobooks/store/records.ts';
import { ebur128, probeTags } from '../helpers/audiobooks.ts';

const NOW = new Date().toISOString();

/** A speech-like test signal: a 180 Hz buzz with syllable-rate bursts and hard peaks. */
function speechLike(seconds: number, rate = 48000): Buffer {
  const n = Math.round(seconds * rate);
  const out = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) {
    const t = i / rate;
    const syllables = Math.max(0, Math.sin(2 * Math.PI * 4 * t)) ** 2;
    const v = syllables * (0.6 * Math.sin(2 * Math.PI * 180 * t) + 0.3 * Math.sin(2 * Math.PI * 900 * t) + 0.1 * Math.sin(2 * Math.PI * 2400 * t));
    out.writeInt16LE(Math.round(Math.max(-1, Math.min(1, v * 0.95)) * 32767), i * 2);
  }
  return out;
}

async function setUp(t: { teardown(fn: () => void): void }) {
  const dir = mkdtempSync(path.join(tmpdir(), 'abk-master-'));
  const db = openMemoryDb();
  t.teardown(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const store = createSqliteAudiobookStore(db, 'audiobooks_');
  const blobs = createDirectoryBlobs(dir);
  const book: BookRecord = {
    id: 'abk_m1', accountId: 'acc_1', title: 'Sách', author: 'Tác giả', engine: 'v4', narratorVoice: 'vi-north-female-mai', cast: [],
    status: 'rendering', waitingReason: null, error: null, payerKeyId: 'k', payerGrantId: 'g', version: 0, run: 1, lastTurnAt: NOW,
    queuedAt: NOW, quotaRetryAt: null, createdAt: NOW, completedAt: null,
  };
  await store.createBook(book);
  const parts = [speechLike(1.5), speechLike(1)];
  for (const [i, pcm] of parts.entries()) await blobs.put(partKey(book.id, 1, i), pcm, 'application/octet-stream');
  const chapter: ChapterRecord = {
    bookId: book.id, accountId: 'acc_1', index: 1, title: 'Chương một', status: 'rendered', characters: 100, segments: 1, contentHash: 'h',
    partsPlanned: 2, parts: parts.map((pcm) => ({ samples: pcm.length / 2, renderedAt: NOW, attempt: 1 })), attempt: 1, dispatch: null,
    dispatchSeq: 1, leaseOwner: null, leaseUntil: null, lastProgressAt: NOW, charge: null, refundDue: null, failures: 0, retryAt: null, error: null,
    masterAttempts: 0, masterRetryAt: null, audioKey: null, audioFormat: null, durationSeconds: 6.5, createdAt: NOW, startedAt: NOW, renderedAt: NOW, completedAt: null,
  };
  await store.addChapter({ bookId: book.id, expectVersion: 0, chapter, segments: [{ position: 0, speaker: null, text: 'x', sceneBreak: false }] });
  return { store, blobs, book, parts };
}

test('a mastering failure is retried after growing waits; after the last the chapter is delivered as WAV (audioFormat wav)', async (t) => {
  const { store, blobs, book, parts } = await setUp(t);
  let calls = 0;
  const failing: MasterFn = async () => {
    calls++;
    throw new Error('encoder crashed');
  };
  const worker = createMasteringWorker({ store, blobs, logger: createLogger('silent'), retryMs: [200, 400], master: failing });
  const waits: number[] = [];
  await worker.tick();
  let chapter = (await store.getChapter(book.id, 1))!;
  t.like(chapter, { status: 'mastering', masterAttempts: 1, leaseOwner: null });
  t.regex(chapter.error!, /Mastering attempt 1 failed \(encoder crashed\)/);
  waits.push(Date.parse(chapter.masterRetryAt!) - Date.now());
  await worker.tick();
  t.is(calls, 1, 'not before its retry time');
  await new Promise((r) => setTimeout(r, 220));
  await worker.tick();
  chapter = (await store.getChapter(book.id, 1))!;
  t.is(chapter.masterAttempts, 2);
  waits.push(Date.parse(chapter.masterRetryAt!) - Date.now());
  t.true(waits[1]! > waits[0]! + 100, `waits grow: ${waits.join(', ')}`);
  await new Promise((r) => setTimeout(r, 420));
  await worker.tick();
  t.is(calls, 3);
  chapter = (await store.getChapter(book.id, 1))!;
  t.like(chapter, { status: 'completed', audioFormat: 'wav', audioKey: `audiobooks/${book.id}/1.wav`, error: null, masterAttempts: 3 });

  const wav = await blobs.open(chapter.audioKey!);
  const bytes = await new Promise<Buffer>((resolve) => {
    const chunks: Buffer[] = [];
    wav!.stream.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve(Buffer.concat(chunks)));
  });
  const header = parseWavHeader(bytes)!;
  t.like(header, { sampleRate: 48000, channels: 1, bitsPerSample: 16 });
  const expected = (0.5 + 3.5) * 48000 * 2 + parts.reduce((n, p) => n + p.length, 0);
  t.is(header.dataBytes, expected);
  t.is(bytes.length, 44 + expected);
  t.false(await blobs.exists(partKey(book.id, 1, 0)), 'parts are dropped once delivered');
  t.like((await store.listLibrary('acc_1', { offset: 0, limit: 5 })).items[0], { audioFormat: 'wav', chapterIndex: 1 });
  t.like(await store.getBook(book.id), { status: 'completed' });
  t.like((await store.listNotifications('acc_1', 5))[0], { kind: 'audiobook.completed', bookId: book.id });
});

test('an audio store out of reach or a full disk uses up no mastering attempt: after an outage longer than the retries the chapter is still mastered to MP3', async (t) => {
  const { store, blobs, book } = await setUp(t);
  let calls = 0;
  const full = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  // Four outages, more than the two retries that lead to the WAV fallback, then the store takes the MP3.
  const flaky: MasterFn = async (_source, _tags, sink) => {
    calls++;
    if (calls <= 4) throw full;
    await sink(Readable.from([Buffer.from('ID3 mastered')]));
    return { integratedLufs: -19, truePeakDbtp: -3, gainDb: 0 } as unknown as Awaited<ReturnType<MasterFn>>;
  };
  const worker = createMasteringWorker({ store, blobs, logger: createLogger('silent'), retryMs: [20, 20], master: flaky });
  for (let i = 0; i < 4; i++) {
    await worker.tick();
    const chapter = (await store.getChapter(book.id, 1))!;
    t.like(chapter, { status: 'mastering', masterAttempts: 0 });
    t.regex(chapter.error!, /Mastering waits for the audio store \(ENOSPC/);
    await new Promise((r) => setTimeout(r, 40));
  }
  await worker.tick();
  t.is(calls, 5);
  t.like(await store.getChapter(book.id, 1), { status: 'completed', audioFormat: 'mp3', audioKey: `audiobooks/${book.id}/1.mp3`, error: null });
});

test('mastering reaches -19 LUFS within 0.5 LU and true peaks at most -3 dBTP as ebur128 measures the MP3, with its ID3 tags', async (t) => {
  const { store, blobs, book } = await setUp(t);
  const worker = createMasteringWorker({ store, blobs, logger: createLogger('silent'), retryMs: [1000] });
  await worker.tick();
  const chapter = (await store.getChapter(book.id, 1))!;
  t.like(chapter, { status: 'completed', audioFormat: 'mp3' });
  const blob = await blobs.open(chapter.audioKey!);
  t.is(blob!.info.contentType, 'audio/mpeg');
  const chunks: Buffer[] = [];
  for await (const c of blob!.stream) chunks.push(c as Buffer);
  const mp3 = Buffer.concat(chunks);
  const loudness = await ebur128(mp3);
  t.true(Math.abs(loudness.integrated + 19) <= 0.5, `integrated ${loudness.integrated}`);
  t.true(loudness.truePeak <= -3, `true peak ${loudness.truePeak}`);
  t.like((await probeTags(mp3)).tags, { title: 'Chương một', album: 'Sách', artist: 'Tác giả', track: '1' });
});

test('a silent chapter is encoded as it is (nothing to normalise) rather than failing', async (t) => {
  const stored: Buffer[] = [];
  const result = await masterMp3({ sampleRate: 48000, open: async function* () { yield Buffer.alloc(48000 * 2); } },
    { title: 't', album: 'a', track: 1 }, async (mp3) => {
      const chunks: Buffer[] = [];
      for await (const c of mp3) chunks.push(c as Buffer);
      stored.push(Buffer.concat(chunks));
    });
  t.is(result.passes, 1);
  t.true(stored[0]!.length > 1000);
});

test('stopping the mastering worker waits for the chapter in hand only, not for every chapter that is due (shutdown kept its deadline)', async (t) => {
  const { store, blobs, book, parts } = await setUp(t);
  // Four more rendered chapters of the same book: five due at once, as when many books finish together.
  const first = (await store.getChapter(book.id, 1))!;
  for (let index = 2; index <= 5; index++) {
    for (const [i, pcm] of parts.entries()) await blobs.put(partKey(book.id, index, i), pcm, 'application/octet-stream');
    t.true(await store.addChapter({ bookId: book.id, expectVersion: index - 1, chapter: { ...first, index, title: `Chương ${index}` }, segments: [{ position: 0, speaker: null, text: 'x', sceneBreak: false }] }));
  }
  const mastered: number[] = [];
  let release!: () => void;
  const inHand = new Promise<void>((resolve) => { release = resolve; });
  let begun!: () => void;
  const started = new Promise<void>((resolve) => { begun = resolve; });
  const slow: MasterFn = async (_source, tags, sink) => {
    begun();
    await inHand;
    await sink(Readable.from([Buffer.from('mp3')]));
    mastered.push(tags.track);
    return { integrated: -19, truePeak: -3, passes: 1 };
  };
  const stop = runMasteringWorker({ store, blobs, logger: createLogger('silent'), retryMs: [1000], master: slow }, 60_000);
  await started;
  const stopped = stop();
  release();
  await stopped;
  t.deepEqual(mastered, [1], 'the chapter in hand was finished, no other was begun');
  t.like(await store.getChapter(book.id, 1), { status: 'completed' });
  for (let index = 2; index <= 5; index++) t.like(await store.getChapter(book.id, index), { status: 'rendered' });
});

test('stopping the mastering worker cuts the chapter in hand short: no attempt used, its lease given up so the next process masters it at once', async (t) => {
  const { store, blobs, book } = await setUp(t);
  let begun!: () => void;
  const started = new Promise<void>((resolve) => { begun = resolve; });
  // Like masterMp3's ffmpeg: runs until its signal kills it (a long chapter takes minutes).
  const endless: MasterFn = (_source, _tags, _sink, signal) => new Promise((_resolve, reject) => {
    begun();
    signal?.addEventListener('abort', () => reject(new Error('ffmpeg was killed')), { once: true });
  });
  const stop = runMasteringWorker({ store, blobs, logger: createLogger('silent'), retryMs: [1000], master: endless }, 60_000);
  await started;
  await stop();
  t.like(await store.getChapter(book.id, 1), { status: 'mastering', masterAttempts: 0, leaseOwner: null, leaseUntil: null, masterRetryAt: null });
  // Another process (a restart) takes it over without waiting for a lease to run out.
  const mastered: number[] = [];
  const quick: MasterFn = async (_source, tags, sink) => {
    await sink(Readable.from([Buffer.from('mp3')]));
    mastered.push(tags.track);
    return { integrated: -19, truePeak: -3, passes: 1 };
  };
  await createMasteringWorker({ store, blobs, logger: createLogger('silent'), retryMs: [1000], master: quick }).tick();
  t.deepEqual(mastered, [1]);
  t.like(await store.getChapter(book.id, 1), { status: 'completed' });
});
