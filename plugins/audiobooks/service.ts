import { randomUUID } from 'node:crypto';
import type { AuthContext } from '../../core/http/auth.ts';
import { DomainError } from '../../core/errors.ts';
import { STARTED, type BookRecord, type BookStatus } from './store/records.ts';
import { ownBook, pricer, requireLiveKey, resolveCast, viewContextFor, type RouteDeps } from './context.ts';
import { createChapterAdder } from './chapters.ts';
import { grantBudgets, insufficientTokens, weighChapters } from './weighing.ts';
import { bookView, libraryView, notificationView } from './view.ts';
import type { CreateBookBody, PageQuery } from './schemas.ts';

/** Chapters that (re)render on a start: never rendered, failed three times, or cancelled before they began. */
const TO_RENDER = new Set(['pending', 'failed', 'cancelled']);
/** Book states a start moves to `queued`. */
const STOPPED: BookStatus[] = ['draft', 'completed', 'partial', 'failed', 'cancelled'];

/** The logic of the audiobook routes; no Koa in here. */
export function createAudiobookService(deps: RouteDeps) {
  const { store, catalog } = deps;

  async function view(book: BookRecord, auth: AuthContext, withLinks = true) {
    const [chapters, ctx] = await Promise.all([store.listChapters(book.id), viewContextFor(deps, auth, book.engine, withLinks)]);
    return bookView(book, chapters, ctx);
  }

  return {
    addChapter: createChapterAdder(deps),

    async create(body: CreateBookBody, auth: AuthContext) {
      requireLiveKey(auth);
      const engine = catalog.resolveEngine(body.engine);
      const narrator = await catalog.resolve({ voice: body.narratorVoice, engine, accountId: auth.accountId, allowClones: false, param: 'narratorVoice' });
      const cast = await resolveCast(catalog, body.cast, engine, auth.accountId);
      const book: BookRecord = {
        id: 'abk_' + randomUUID().replace(/-/g, ''), accountId: auth.accountId, title: body.title, author: body.author, engine,
        narratorVoice: narrator.id, cast, status: 'draft', waitingReason: null, error: null, payerKeyId: auth.keyId, payerGrantId: auth.grantId,
        version: 0, run: 0, lastTurnAt: null, queuedAt: null, quotaRetryAt: null, createdAt: new Date().toISOString(), completedAt: null,
      };
      await store.createBook(book);
      return view(book, auth);
    },

    async list(query: PageQuery, auth: AuthContext) {
      requireLiveKey(auth);
      const { items, total } = await store.listBooks(auth.accountId, { offset: (query.page - 1) * query.limit, limit: query.limit });
      const engines = new Map<string, Awaited<ReturnType<typeof viewContextFor>>>();
      const views = [];
      for (const book of items) {
        if (!engines.has(book.engine)) engines.set(book.engine, await viewContextFor(deps, auth, book.engine, false));
        views.push(bookView(book, await store.listChapters(book.id), engines.get(book.engine)!));
      }
      return { items: views, page: query.page, limit: query.limit, total };
    },

    async get(bookId: string, auth: AuthContext) {
      requireLiveKey(auth);
      return view(await ownBook(store, bookId, auth.accountId), auth);
    },

    /**
     * Starts or resumes: weighs what is left against every grant that may pay
     * (402 `insufficient_tokens` naming the chapter), puts failed and
     * cancelled chapters back to pending, and queues the book. Nothing is
     * charged here: each chapter is charged when it starts rendering.
     */
    async start(bookId: string, auth: AuthContext) {
      requireLiveKey(auth);
      const book = await ownBook(store, bookId, auth.accountId);
      if (STARTED.includes(book.status)) return view(book, auth);
      const chapters = await store.listChapters(book.id);
      if (chapters.length === 0) {
        throw new DomainError('invalid', 'The book has no chapters yet; add one with POST /audiobooks/{bookId}/chapters.', { code: 'no_chapters' });
      }
      const toRender = chapters.filter((c) => TO_RENDER.has(c.status) && !c.charge);
      if (toRender.length === 0 && !chapters.some((c) => c.status === 'rendering' || c.status === 'rendered' || c.status === 'mastering')) {
        return view(book, auth);
      }
      const priceOf = pricer(deps.billing, book.engine);
      const budgets = await grantBudgets(deps.documents, { accountId: auth.accountId, grantId: auth.grantId }, book.engine);
      const weighed = weighChapters(toRender.map((c) => ({ index: c.index, title: c.title, tokens: priceOf(c.characters) })), budgets);
      if (!weighed.ok) throw insufficientTokens(weighed);
      // Chapters first: a book seen `queued` by the scheduler never has stale failed chapters to settle on.
      await store.updateChapters(book.id, { status: 'pending', failures: 0, error: null, retryAt: null }, { status: ['failed', 'cancelled'] });
      const started = await store.updateBook(book.id, {
        status: 'queued', payerKeyId: auth.keyId, payerGrantId: auth.grantId, run: book.run + 1, waitingReason: null, error: null,
        completedAt: null, queuedAt: new Date().toISOString(), quotaRetryAt: null,
      }, { status: STOPPED });
      return view(started ?? (await ownBook(store, bookId, auth.accountId)), auth);
    },

    /** Stops the book: pending chapters are cancelled (never billed); a chapter already rendering finishes. */
    async cancel(bookId: string, auth: AuthContext): Promise<Record<string, unknown>> {
      requireLiveKey(auth);
      const book = await ownBook(store, bookId, auth.accountId);
      if (book.status === 'cancelled') return view(book, auth);
      if (!STARTED.includes(book.status)) {
        const code = book.status === 'draft' ? 'book_not_started' : 'book_finished';
        throw new DomainError('conflict', `The book is ${book.status}; only a queued or rendering book can be cancelled.`, { code, extra: { status: book.status } });
      }
      // A book that waited on its plans' limits keeps no quota message: it is stopped, and a start weighs it afresh.
      const cancelled = await store.updateBook(book.id, { status: 'cancelled', waitingReason: null, ...(book.waitingReason === 'quota' ? { error: null } : {}) }, { status: STARTED });
      if (!cancelled) return this.cancel(bookId, auth);
      await store.updateChapters(book.id, { status: 'cancelled', retryAt: null }, { status: ['pending'] });
      return view(cancelled, auth);
    },

    async library(query: PageQuery, auth: AuthContext) {
      requireLiveKey(auth);
      const { items, total } = await store.listLibrary(auth.accountId, { offset: (query.page - 1) * query.limit, limit: query.limit });
      return { items: items.map((e) => libraryView(e, deps.downloads)), page: query.page, limit: query.limit, total };
    },

    async notifications(limit: number, auth: AuthContext) {
      requireLiveKey(auth);
      return { items: (await store.listNotifications(auth.accountId, limit)).map(notificationView) };
    },
  };
}
