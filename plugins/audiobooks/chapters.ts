import type { AuthContext } from '../../core/http/auth.ts';
import { DomainError } from '../../core/errors.ts';
import type { BookPatch } from './store/port.ts';
import type { BookRecord, CastEntry, ChapterRecord, SegmentRecord } from './store/records.ts';
import { ownBook, requireLiveKey, resolveCast, viewContextFor, type RouteDeps } from './context.ts';
import {
  chapterCharacters, checkBookLimits, checkSpeakers, contentHash, duplicateChapter, duplicateSegments, mergeCast, overPlanLimit,
  repeatsTail, segmentMismatch,
} from './rules.ts';
import { planParts, scriptUnits, type ScriptSegment } from './script.ts';
import { speaks } from './render/part.ts';
import { chapterView, totalsOf, type ViewContext } from './view.ts';
import type { AddChapterBody } from './schemas.ts';

/** Chapter states that can still take more segments (when never charged). */
const NOT_STARTED = ['pending', 'cancelled'];

/** Adds serialised by the book's version; a lost race re-reads and tries again this often. */
const ADD_ATTEMPTS = 5;

interface Prepared {
  book: BookRecord;
  chapters: ChapterRecord[];
  cast: CastEntry[];
  ctx: ViewContext;
}

const toRecords = (segments: ScriptSegment[], from: number): SegmentRecord[] =>
  segments.map((s, i) => ({ position: from + i, speaker: s.speaker, text: s.text, sceneBreak: s.sceneBreak }));

/**
 * A chapter added to a book that had finished reopens it (it joins a started
 * book) as a new run, so that finishing again writes its own notification
 * (one per finished run: `ntf_<book>_<run>`).
 */
function reopened(book: BookRecord): BookPatch {
  return book.status === 'completed' ? { status: 'queued', completedAt: null, queuedAt: new Date().toISOString(), waitingReason: null, run: book.run + 1 } : {};
}

/**
 * `POST /audiobooks/{id}/chapters`: a new chapter, or more segments for a
 * chapter not yet started (`appendTo`, optionally `afterSegment`), with the
 * add rules of SPEC in order: plan limit, book limits, then the 409 conflicts.
 */
export function createChapterAdder(deps: RouteDeps) {
  const { store } = deps;

  async function prepare(bookId: string, body: AddChapterBody, auth: AuthContext): Promise<Prepared> {
    const book = await ownBook(store, bookId, auth.accountId);
    const incoming = await resolveCast(deps.catalog, body.cast, book.engine, auth.accountId);
    const cast = mergeCast(book.cast, incoming);
    checkSpeakers(cast, body.segments);
    const [chapters, ctx] = await Promise.all([store.listChapters(book.id), viewContextFor(deps, auth, book.engine, true)]);
    return { book, chapters, cast, ctx };
  }

  const bookCharacters = (chapters: ChapterRecord[]) => chapters.reduce((sum, c) => sum + c.characters, 0);

  async function addNew(p: Prepared, body: AddChapterBody): Promise<ChapterRecord | null> {
    const title = body.title!;
    // The limits first (the README's order), so text over them is never prepared.
    const characters = chapterCharacters(title, body.segments);
    if (characters > p.ctx.chapterCharsMax) throw overPlanLimit(characters, p.ctx.chapterCharsMax);
    checkBookLimits({ chapters: p.chapters.length + 1, bookCharacters: bookCharacters(p.chapters) + characters });
    // As on every speech route: a chapter that would render as silence is refused before it can be charged.
    if (![title, ...body.segments.map((s) => s.text)].some(speaks)) {
      throw new DomainError('invalid', 'The chapter (its title and segments) contains nothing that can be spoken.', { param: 'segments', code: 'NOTHING_TO_SPEAK' });
    }
    const hash = contentHash(title, body.segments);
    const last = p.chapters.at(-1);
    if (last && last.contentHash === hash) throw duplicateChapter(last.index);
    const now = new Date().toISOString();
    const chapter: ChapterRecord = {
      bookId: p.book.id, accountId: p.book.accountId, index: (last?.index ?? 0) + 1, title, status: 'pending', characters,
      segments: body.segments.length, contentHash: hash,
      partsPlanned: planParts(scriptUnits(title, body.segments, deps.settings.partChars), deps.settings.partChars).length, parts: [],
      attempt: 0, dispatch: null, dispatchSeq: 0, leaseOwner: null, leaseUntil: null, lastProgressAt: null, charge: null, refundDue: null,
      failures: 0, retryAt: null, error: null, masterAttempts: 0, masterRetryAt: null, audioKey: null, audioFormat: null,
      durationSeconds: null, createdAt: now, startedAt: null, renderedAt: null, completedAt: null,
    };
    const added = await store.addChapter({
      bookId: p.book.id, expectVersion: p.book.version, chapter, segments: toRecords(body.segments, 0), bookPatch: { cast: p.cast, ...reopened(p.book) },
    });
    return added ? chapter : null;
  }

  async function append(p: Prepared, body: AddChapterBody): Promise<ChapterRecord | null> {
    const index = body.appendTo!;
    const chapter = p.chapters.find((c) => c.index === index);
    if (!chapter) throw new DomainError('not_found', `Chapter ${index} of audiobook ${p.book.id} not found.`, { code: 'chapter_not_found' });
    if (!NOT_STARTED.includes(chapter.status) || chapter.attempt > 0) {
      throw new DomainError('conflict', `Chapter ${index} has already started rendering; add the rest as a new chapter.`, { code: 'chapter_started', extra: { chapter: index } });
    }
    const n = chapter.segments;
    if (body.afterSegment !== undefined && body.afterSegment !== n) {
      const [last] = n > 0 ? await store.readSegments(p.book.id, index, n - 1, n) : [];
      throw segmentMismatch(index, n, body.afterSegment, last ?? null);
    }
    if (body.afterSegment === undefined) {
      const k = body.segments.length;
      if (k <= n && repeatsTail(await store.readSegments(p.book.id, index, n - k, n), body.segments)) throw duplicateSegments(index, k);
    }
    const characters = chapter.characters + chapterCharacters('', body.segments);
    if (characters > p.ctx.chapterCharsMax) throw overPlanLimit(characters, p.ctx.chapterCharsMax);
    checkBookLimits({ chapters: p.chapters.length, bookCharacters: bookCharacters(p.chapters) - chapter.characters + characters });
    // The whole script is needed for the hash and the part plan; a chapter is at most 60,000 characters.
    const script: ScriptSegment[] = [...(await store.readSegments(p.book.id, index, 0, n)), ...body.segments];
    const patch = {
      characters, segments: n + body.segments.length, contentHash: contentHash(chapter.title, script),
      partsPlanned: planParts(scriptUnits(chapter.title, script, deps.settings.partChars), deps.settings.partChars).length,
    };
    const appended = await store.appendSegments({
      bookId: p.book.id, expectVersion: p.book.version, index, expectSegments: n, segments: toRecords(body.segments, n), patch, bookPatch: { cast: p.cast, ...reopened(p.book) },
    });
    return appended ? { ...chapter, ...patch } : null;
  }

  return async function addChapter(bookId: string, body: AddChapterBody, auth: AuthContext): Promise<{ status: number; body: Record<string, unknown> }> {
    requireLiveKey(auth);
    for (let attempt = 1; attempt <= ADD_ATTEMPTS; attempt++) {
      const p = await prepare(bookId, body, auth);
      const chapter = body.appendTo === undefined ? await addNew(p, body) : await append(p, body);
      if (!chapter) continue;
      const chapters = await store.listChapters(p.book.id);
      return {
        status: body.appendTo === undefined ? 201 : 200,
        body: { bookId: p.book.id, chapter: chapterView(chapter, p.ctx), totals: totalsOf(chapters, p.ctx.priceOf), chapterCharsMax: p.ctx.chapterCharsMax },
      };
    }
    throw new DomainError('limited', 'Other chapters were being added to this book at the same moment. Retry in one second.', { code: 'CONCURRENT_CONFLICT', retryAfterSeconds: 1 });
  };
}
