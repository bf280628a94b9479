import test from 'ava';
import type { TestPlatform } from '../helpers/platform.ts';
import { addChapter, call, chapterPrice, createBook, grantUsed, startAudiobookPlatform, type Segment } from '../helpers/audiobooks.ts';

/**
 * The audiobook routes (SPEC "Audiobook operations", chapter add rules, start
 * rules, limits). No book here is started successfully, so nothing renders:
 * rendering has its own tests (audiobooks-rendering.test.ts).
 */
let p: TestPlatform;
test.before(async () => {
  p = await startAudiobookPlatform();
});
test.after.always(() => p?.stop());

const text = (n: number, mark = 'a') => (mark + ' ').repeat(Math.ceil(n / 2)).slice(0, n);

test('POST /audiobooks answers 201 with a draft carrying every field; GET returns it; nothing is billed', async (t) => {
  const acct = await p.bootstrap();
  const res = await call(p, acct.apiKey, 'POST', '/audiobooks', {
    title: 'Dế Mèn phiêu lưu ký', author: 'Tô Hoài', narratorVoice: 'Mai', cast: [{ speaker: 'Dế Mèn', voiceId: 'vi-north-male-minh' }],
  });
  t.is(res.status, 201);
  t.like(res.body, {
    title: 'Dế Mèn phiêu lưu ký', author: 'Tô Hoài', status: 'draft', narratorVoice: 'vi-north-female-mai', engine: 'v4',
    cast: [{ speaker: 'Dế Mèn', voiceId: 'vi-north-male-minh' }], waitingReason: null, error: null, otherBooksWaiting: null,
    chapterCharsMax: 60000, chapters: [], completedAt: null,
    totals: { chapters: 0, completedChapters: 0, characters: 0, estimatedTokens: 0, tokensCharged: 0, durationSeconds: 0 },
  });
  t.regex(res.body.id, /^abk_[0-9a-f]{32}$/);
  t.truthy(Date.parse(res.body.createdAt));
  t.deepEqual((await call(p, acct.apiKey, 'GET', `/audiobooks/${res.body.id}`)).body, res.body);
  t.is(await grantUsed(p, acct.grantId), 0);
});

test('GET /audiobooks pages the account\'s books newest first, items without download links; limit is 1 to 50', async (t) => {
  const acct = await p.bootstrap();
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push((await createBook(p, acct.apiKey, { title: `Sách ${i}` })).id);
  await addChapter(p, acct.apiKey, ids[2], 'Một', [{ text: 'Xin chào.' }]);
  const page1 = await call(p, acct.apiKey, 'GET', '/audiobooks?limit=2');
  t.is(page1.status, 200);
  t.like(page1.body, { page: 1, limit: 2, total: 3 });
  t.deepEqual(page1.body.items.map((b: any) => b.id), [ids[2], ids[1]]);
  t.false('audioUrl' in page1.body.items[0].chapters[0], 'list items carry no links');
  const page2 = await call(p, acct.apiKey, 'GET', '/audiobooks?limit=2&page=2');
  t.deepEqual(page2.body.items.map((b: any) => b.id), [ids[0]]);
  t.is((await call(p, acct.apiKey, 'GET', '/audiobooks?limit=51')).status, 400);
  t.is((await call(p, acct.apiKey, 'GET', '/audiobooks?limit=0')).status, 400);
  t.is((await call(p, acct.apiKey, 'GET', '/audiobooks?page=0')).status, 400);
  const other = await p.bootstrap();
  t.is((await call(p, other.apiKey, 'GET', '/audiobooks')).body.total, 0);
  t.like((await call(p, other.apiKey, 'GET', `/audiobooks/${ids[0]}`)), { status: 404, body: { code: 'book_not_found' } });
});

test('live keys and catalogue voices only: a test key, a cloned voice and an unknown voice are 400', async (t) => {
  const testKey = await p.bootstrap({ kind: 'test' });
  t.like(await call(p, testKey.apiKey, 'POST', '/audiobooks', { title: 'x', narratorVoice: 'Mai' }), { status: 400, body: { code: 'live_key_required' } });
  t.like(await call(p, testKey.apiKey, 'GET', '/audiobooks'), { status: 400, body: { code: 'live_key_required' } });
  const acct = await p.bootstrap();
  const clone = await (await p.admin(`/accounts/${acct.accountId}/clones`, { method: 'POST', json: { name: 'Giọng tôi', baseVoiceId: 'vi-north-male-minh' } })).json();
  const asNarrator = await call(p, acct.apiKey, 'POST', '/audiobooks', { title: 'x', narratorVoice: clone.id });
  t.is(asNarrator.status, 400);
  t.regex(JSON.stringify(asNarrator.body.message), /Cloned voices cannot be used/);
  const inCast = await call(p, acct.apiKey, 'POST', '/audiobooks', { title: 'x', narratorVoice: 'Mai', cast: [{ speaker: 'A', voiceId: clone.id }] });
  t.is(inCast.status, 400);
  const book = await createBook(p, acct.apiKey);
  t.is((await call(p, acct.apiKey, 'POST', `/audiobooks/${book.id}/chapters`, { title: 'x', segments: [{ text: 'x', speaker: 'A' }], cast: [{ speaker: 'A', voiceId: clone.id }] })).status, 400);
  t.like(await call(p, acct.apiKey, 'POST', '/audiobooks', { title: 'x', narratorVoice: 'alloy' }), { status: 400, body: { code: 'VOICE_NOT_FOUND' } });
  const tooMany = Array.from({ length: 31 }, (_, i) => ({ speaker: `s${i}`, voiceId: 'Mai' }));
  t.is((await call(p, acct.apiKey, 'POST', '/audiobooks', { title: 'x', narratorVoice: 'Mai', cast: tooMany })).status, 400, 'at most 30 cast voices');
  t.is((await call(p, acct.apiKey, 'POST', '/audiobooks', { title: 'x'.repeat(201), narratorVoice: 'Mai' })).status, 400);
});

test('chapter add rules: duplicate_chapter, duplicate_segments, segment_mismatch (with the ending words), appendTo continues a pending chapter', async (t) => {
  const acct = await p.bootstrap();
  const book = await createBook(p, acct.apiKey, { cast: [{ speaker: 'Lan', voiceId: 'vi-south-female-lan' }] });
  const segments: Segment[] = [{ text: 'Ngày xửa ngày xưa.' }, { text: 'Có một cô bé tên là Lan.', speaker: 'Lan' }];
  const first = await addChapter(p, acct.apiKey, book.id, 'Chương một', segments);
  t.like(first, { chapter: { index: 1, status: 'pending', segments: 2, tokenCost: null, progress: null }, totals: { chapters: 1, estimatedTokens: chapterPrice('Chương một', segments) } });
  const path = `/audiobooks/${book.id}/chapters`;
  t.like(await call(p, acct.apiKey, 'POST', path, { title: 'Chương một', segments }), { status: 409, body: { code: 'duplicate_chapter', chapter: 1 } });

  t.like(await call(p, acct.apiKey, 'POST', path, { appendTo: 1, segments: [segments[1]] }), { status: 409, body: { code: 'duplicate_segments' } });
  const mismatch = await call(p, acct.apiKey, 'POST', path, { appendTo: 1, afterSegment: 1, segments: [{ text: 'Tiếp theo.' }] });
  t.like(mismatch, { status: 409, body: { code: 'segment_mismatch', segments: 2, endsWith: 'Có một cô bé tên là Lan.' } });
  t.regex(mismatch.body.message, /ends with "Có một cô bé tên là Lan\."/);

  const appended = await call(p, acct.apiKey, 'POST', path, { appendTo: 1, afterSegment: 2, segments: [{ text: 'Có một cô bé tên là Lan.', speaker: 'Lan' }] });
  t.is(appended.status, 200, 'with afterSegment a repeat is on purpose');
  t.like(appended.body, { chapter: { index: 1, segments: 3 } });
  t.like(await call(p, acct.apiKey, 'POST', path, { appendTo: 1, segments: [{ text: 'Rồi một hôm.' }] }), { status: 200, body: { chapter: { segments: 4 } } });
  t.like(await call(p, acct.apiKey, 'POST', path, { appendTo: 7, segments: [{ text: 'x' }] }), { status: 404, body: { code: 'chapter_not_found' } });
  t.is((await call(p, acct.apiKey, 'POST', path, { afterSegment: 2, title: 'x', segments: [{ text: 'x' }] })).status, 400, 'afterSegment needs appendTo');
  t.like(await call(p, acct.apiKey, 'POST', path, { title: 'Hai', segments: [{ text: 'x', speaker: 'Hoa' }] }), { status: 400, body: { code: 'unknown_speaker' } });
  const withCast = await call(p, acct.apiKey, 'POST', path, { title: 'Hai', segments: [{ text: 'Chào Hoa.', speaker: 'Hoa' }], cast: [{ speaker: 'Hoa', voiceId: 'vi-central-female-huong' }] });
  t.is(withCast.status, 201, 'more cast entries may come with a chapter');
  // SPEC Billing rule 3: what would render as silence is refused before it can be charged, as on /tts.
  t.like(await call(p, acct.apiKey, 'POST', path, { title: '...', segments: [{ text: '!!! ??? …' }, { text: '- - -' }] }), { status: 400, body: { code: 'NOTHING_TO_SPEAK' } });
  const after = (await call(p, acct.apiKey, 'GET', `/audiobooks/${book.id}`)).body;
  t.deepEqual(after.cast.map((c: any) => c.speaker), ['Lan', 'Hoa']);
  t.deepEqual(after.chapters.map((c: any) => [c.index, c.segments]), [[1, 4], [2, 1]]);
});

test('chapter_over_plan_limit: 400 with chapterCharsMax; lower on a plan with a daily cap, 60000 otherwise', async (t) => {
  const capped = await p.bootstrap({ grant: { totalTokens: 100_000, dailyCap: 1000 } });
  const book = await createBook(p, capped.apiKey);
  t.is(book.chapterCharsMax, 256, 'the most characters 1000 tokens pay at 3 x 1.3');
  const over = await call(p, capped.apiKey, 'POST', `/audiobooks/${book.id}/chapters`, { title: 'Một', segments: [{ text: text(254) }] });
  t.like(over, { status: 400, body: { code: 'chapter_over_plan_limit', chapterCharsMax: 256 } });
  t.is((await call(p, capped.apiKey, 'POST', `/audiobooks/${book.id}/chapters`, { title: 'Một', segments: [{ text: text(253) }] })).status, 201);
  const grown = await call(p, capped.apiKey, 'POST', `/audiobooks/${book.id}/chapters`, { appendTo: 1, segments: [{ text: 'thêm' }] });
  t.like(grown, { status: 400, body: { code: 'chapter_over_plan_limit' } }, 'appending counts too');

  const plain = await p.bootstrap();
  const big = await createBook(p, plain.apiKey);
  const sixty = await call(p, plain.apiKey, 'POST', `/audiobooks/${big.id}/chapters`, { title: 'Dài', segments: [{ text: text(30000) }, { text: text(30000, 'b') }] });
  t.like(sixty, { status: 400, body: { code: 'chapter_over_plan_limit', chapterCharsMax: 60000 } });
  // One segment over the limit is the same refusal, not a validation failure without chapterCharsMax.
  const single = await call(p, plain.apiKey, 'POST', `/audiobooks/${big.id}/chapters`, { title: 'Dài', segments: [{ text: text(60001) }] });
  t.like(single, { status: 400, body: { code: 'chapter_over_plan_limit', chapterCharsMax: 60000 } });
});

test('limits: 200 chapters per book and 1,500,000 characters per book', async (t) => {
  const acct = await p.bootstrap();
  const book = await createBook(p, acct.apiKey);
  for (let i = 1; i <= 200; i++) await addChapter(p, acct.apiKey, book.id, `Chương ${i}`, [{ text: `Nội dung ${i}.` }]);
  t.like(await call(p, acct.apiKey, 'POST', `/audiobooks/${book.id}/chapters`, { title: 'thừa', segments: [{ text: 'x' }] }), { status: 400, body: { code: 'too_many_chapters' } });

  const long = await createBook(p, acct.apiKey);
  const chunk = text(59_990);
  for (let i = 0; i < 25; i++) await addChapter(p, acct.apiKey, long.id, `C${i}`, [{ text: chunk }]);
  const full = (await call(p, acct.apiKey, 'GET', `/audiobooks/${long.id}`)).body;
  t.true(full.totals.characters <= 1_500_000);
  const over = await call(p, acct.apiKey, 'POST', `/audiobooks/${long.id}/chapters`, { title: 'thừa', segments: [{ text: text(1_500_000 - full.totals.characters + 1) }] });
  t.like(over, { status: 400, body: { code: 'book_too_long', bookCharsMax: 1_500_000 } });
});

test('402 insufficient_tokens names the chapter no grant can pay when its turn comes; nothing is charged and the book stays a draft', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 1000 } });
  await p.admin(`/accounts/${acct.accountId}/grants`, { method: 'POST', json: { totalTokens: 1000 } });
  const book = await createBook(p, acct.apiKey);
  const s1 = [{ text: text(170) }];
  const s2 = [{ text: text(170, 'b') }];
  const s3 = [{ text: text(120, 'c') }];
  await addChapter(p, acct.apiKey, book.id, 'Một', s1);
  await addChapter(p, acct.apiKey, book.id, 'Hai', s2);
  await addChapter(p, acct.apiKey, book.id, 'Ba', s3);
  const [p1, p2, p3] = [chapterPrice('Một', s1), chapterPrice('Hai', s2), chapterPrice('Ba', s3)];
  t.true(p1 + p2 + p3 <= 2000 && p1 <= 1000 && p3 > 1000 - p1, 'each grant pays one of the first two; the third fits in neither');
  const res = await call(p, acct.apiKey, 'POST', `/audiobooks/${book.id}/start`);
  t.is(res.status, 402);
  t.like(res.body, { statusCode: 402, code: 'insufficient_tokens', chapter: 3, chapterTitle: 'Ba', required: p3, remaining: 1000 - p1 });
  t.regex(res.body.message, /Chapter 3/);
  t.is((await call(p, acct.apiKey, 'GET', `/audiobooks/${book.id}`)).body.status, 'draft');
  t.is(await grantUsed(p, acct.grantId), 0);

  const small = await p.bootstrap({ grant: { totalTokens: 1000 } });
  const book2 = await createBook(p, small.apiKey);
  await addChapter(p, small.apiKey, book2.id, 'Một', s1);
  await addChapter(p, small.apiKey, book2.id, 'Hai', s2);
  const total = await call(p, small.apiKey, 'POST', `/audiobooks/${book2.id}/start`);
  t.like(total, { status: 402, body: { code: 'insufficient_tokens', required: p1 + p2, remaining: 1000 } });
  t.false('chapter' in total.body, 'a total too small names no chapter');
});

test('start needs a chapter; cancel needs a started book', async (t) => {
  const acct = await p.bootstrap();
  const book = await createBook(p, acct.apiKey);
  t.like(await call(p, acct.apiKey, 'POST', `/audiobooks/${book.id}/start`), { status: 400, body: { code: 'no_chapters' } });
  t.like(await call(p, acct.apiKey, 'POST', `/audiobooks/${book.id}/cancel`), { status: 409, body: { code: 'book_not_started' } });
  t.like(await call(p, acct.apiKey, 'POST', '/audiobooks/abk_nope/start'), { status: 404, body: { code: 'book_not_found' } });
  t.is((await p.api('/audiobooks', { method: 'GET' })).status, 401);
});
