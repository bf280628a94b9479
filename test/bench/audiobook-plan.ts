/**
 * Audiobook memory benchmark: `npx tsx test/bench/audiobook-plan.ts`.
 *
 * Starts the platform in this process (embedded adapters; api and pipelines
 * roles, so the scheduler runs but nothing renders: each book's first chapter
 * keeps a render slot) and, for a book of
 * 1,500,000 characters (SPEC's largest: 25 chapters of 60,000 characters,
 * each sent as 100 segments), measures:
 * - the JavaScript heap retained after each chapter is accepted (after a full
 *   GC): the book must not pile up in memory, so its growth per chapter must
 *   stay well under the 120 KB a chapter's text alone takes as a string;
 * - the heap retained once the whole book is accepted, started (weighed
 *   chapter by chapter against the grants) and its first chapter dispatched
 *   (charged and published): under 2 MB, less than the book's 3 MB of text;
 * - peak RSS growth over the run (sampled every 10 ms): under 150 MB.
 * The same is measured for a book ten times smaller, for comparison.
 * Exits 1 when a target is missed.
 */
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startAudiobookPlatform, call, createBook } from '../helpers/audiobooks.ts';
import { waitFor } from '../helpers/wait.ts';
import type { TestPlatform } from '../helpers/platform.ts';

v8.setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const CHAPTER_CHARS = 60_000;
const SEGMENTS_PER_CHAPTER = 100;
const RETAINED_LIMIT_MB = 2;
const PER_CHAPTER_LIMIT_KB = 60;
const RSS_LIMIT_MB = 150;

const mb = (bytes: number) => bytes / 1024 / 1024;

const SENTENCES = [
  'Buổi chiều ở làng quê yên bình, lũ trẻ chạy nhảy trên con đường đất đỏ dẫn ra cánh đồng lúa chín vàng.',
  'Bà kể rằng ngày xưa, mỗi mùa gặt, cả xóm cùng nhau ra đồng từ khi trời còn tối, mang theo cơm nắm và ấm trà xanh.',
  'Tiếng máy cày xa xa hòa với tiếng chim hót, tạo nên một bản nhạc quen thuộc mà ai đi xa cũng nhớ.',
];

/** One chapter's script of exactly `chars` characters with its title, made when it is sent (the client never holds the whole book either). */
function chapterSegments(title: string, chapter: number, chars: number): Array<{ text: string }> {
  const budget = chars - title.length;
  const per = Math.floor(budget / SEGMENTS_PER_CHAPTER);
  return Array.from({ length: SEGMENTS_PER_CHAPTER }, (_, i) => {
    const length = i === SEGMENTS_PER_CHAPTER - 1 ? budget - per * (SEGMENTS_PER_CHAPTER - 1) : per;
    let text = `Chương ${chapter}, đoạn ${i + 1}. `;
    for (let s = 0; text.length < length; s++) text += SENTENCES[(chapter + i + s) % SENTENCES.length] + ' ';
    return { text: text.slice(0, length - 1) + '.' };
  });
}

function retainedHeap(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

interface Run {
  characters: number;
  perChapterKb: number;
  retainedMb: number;
  rssGrowthMb: number;
}

async function run(p: TestPlatform, chapters: number, chapterChars: number): Promise<Run> {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000_000 } });
  const book = await createBook(p, acct.apiKey, { title: `Sách ${chapters} chương` });
  const baselineRss = process.memoryUsage().rss;
  let peakRss = baselineRss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 10);
  const baseline = retainedHeap();
  const heaps: number[] = [];
  for (let c = 1; c <= chapters; c++) {
    const title = `Chương ${c}`;
    const res = await call(p, acct.apiKey, 'POST', `/audiobooks/${book.id}/chapters`, { title, segments: chapterSegments(title, c, chapterChars) });
    if (res.status !== 201) throw new Error(`chapter ${c}: ${res.status} ${JSON.stringify(res.body)}`);
    heaps.push(retainedHeap());
  }
  const started = await call(p, acct.apiKey, 'POST', `/audiobooks/${book.id}/start`);
  if (started.status !== 200) throw new Error(`start: ${started.status} ${JSON.stringify(started.body)}`);
  const dispatched = await waitFor(async () => {
    const b = (await call(p, acct.apiKey, 'GET', `/audiobooks/${book.id}`)).body;
    if (!b.chapters) throw new Error(JSON.stringify(b));
    return b.chapters[0].status === 'rendering' && b.chapters[0].tokenCost ? b : null;
  }, { timeoutMs: 30_000, intervalMs: 200, what: 'the first chapter to be dispatched' });
  const retained = retainedHeap() - baseline;
  clearInterval(sampler);
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  // Least-squares slope of retained heap over the chapters accepted.
  const n = heaps.length;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const xs = heaps.map((_, i) => i);
  const mx = mean(xs);
  const my = mean(heaps);
  const slope = n > 1 ? xs.reduce((s, x, i) => s + (x - mx) * (heaps[i]! - my), 0) / xs.reduce((s, x) => s + (x - mx) ** 2, 0) : 0;
  await call(p, acct.apiKey, 'POST', `/audiobooks/${book.id}/cancel`);
  return { characters: dispatched.totals.characters, perChapterKb: slope / 1024, retainedMb: mb(retained), rssGrowthMb: mb(peakRss - baselineRss) };
}

const p = await startAudiobookPlatform({ LOG_LEVEL: process.env.BENCH_LOG ?? 'silent', ROLES: 'api,pipelines', AUDIOBOOK_TICK_MS: '200', AUDIOBOOK_PART_CHARS: '2700', AUDIOBOOK_RENDER_SLOTS: '8' });
let failed: string[] = [];
try {
  // A warm-up book: the first requests load code and fill caches.
  await run(p, 3, 10_000);
  const small = await run(p, 25, CHAPTER_CHARS / 10);
  const full = await run(p, 25, CHAPTER_CHARS);
  for (const [name, r] of [['150,000-character book', small], ['1,500,000-character book', full]] as const) {
    console.log(`${name}: ${r.characters.toLocaleString('en')} characters accepted, started, first chapter dispatched; `
      + `retained heap ${r.retainedMb.toFixed(2)} MB (${r.perChapterKb.toFixed(1)} KB per chapter); peak RSS growth ${r.rssGrowthMb.toFixed(1)} MB`);
  }
  console.log(`ratio of retained heap, full / small book: ${(full.retainedMb / Math.max(0.01, small.retainedMb)).toFixed(2)} (the text is 10x larger)`);
  failed = [
    full.characters !== 1_500_000 && `the full book has ${full.characters} characters, not 1,500,000`,
    full.retainedMb >= RETAINED_LIMIT_MB && `retained heap ${full.retainedMb.toFixed(2)} MB >= ${RETAINED_LIMIT_MB} MB`,
    full.perChapterKb >= PER_CHAPTER_LIMIT_KB && `retained heap grows ${full.perChapterKb.toFixed(1)} KB per chapter >= ${PER_CHAPTER_LIMIT_KB} KB`,
    full.rssGrowthMb >= RSS_LIMIT_MB && `peak RSS growth ${full.rssGrowthMb.toFixed(1)} MB >= ${RSS_LIMIT_MB} MB`,
  ].filter((x): x is string => Boolean(x));
} finally {
  await p.stop();
}
if (failed.length > 0) {
  console.log(`MISSED: ${failed.join('; ')}`);
  process.exitCode = 1;
} else {
  console.log('targets met');
}
