import type { RouteRegistrar } from '../../core/plugin.ts';
import {
  addChapterBody, bookListResponse, bookResponse, cancelConflictFields, chapterAddedResponse, chapterConflictFields, chapterRefusalFields, createBookBody,
  insufficientTokensFields, libraryResponse, notificationsQuery, notificationsResponse, pageQuery,
  type AddChapterBody, type CreateBookBody, type PageQuery,
} from './schemas.ts';
import type { createAudiobookService } from './service.ts';

type Service = ReturnType<typeof createAudiobookService>;

/** Per key and operation; SPEC leaves audiobook rates open. */
const WRITES_PER_MINUTE = 120;
const READS_PER_MINUTE = 600;
/** A 200-chapter book is uploaded by a script in one go. */
const CHAPTERS_PER_MINUTE = 600;
/** A 60,000-character chapter is about 180 KB of JSON in Vietnamese. */
const CHAPTER_JSON_LIMIT = '2mb';

/** Refusals every audiobook route may give (SPEC: live keys only; another account's book is 404). */
const liveKeyOnly = '`live_key_required`: audiobooks take live keys (`vn_sk_…`) only';
const bookNotFound = { 404: { description: '`book_not_found`: no such audiobook, or another account\'s' } };
const voiceRefusals = '`VOICE_NOT_FOUND`, `VOICE_ENGINE_MISMATCH` or a cloned voice (catalogue voices of the book\'s engine only)';

export function registerAudiobookRoutes(route: RouteRegistrar, service: Service): void {
  route<CreateBookBody, unknown>({
    method: 'POST', path: '/audiobooks', auth: 'required', name: 'audiobooks_create', perMinute: WRITES_PER_MINUTE,
    summary: 'Create a draft audiobook', request: { body: createBookBody },
    responses: {
      201: { description: 'The draft book (nothing billed)', schema: bookResponse },
      400: { description: `${liveKeyOnly}; ${voiceRefusals}; \`UNKNOWN_ENGINE\`, \`ENGINE_RETIRED\`` },
    },
    handler: async (ctx, { body }) => {
      ctx.status = 201;
      ctx.body = await service.create(body, ctx.state.auth!);
    },
  });

  route<unknown, PageQuery>({
    method: 'GET', path: '/audiobooks', auth: 'required', name: 'audiobooks_list', perMinute: READS_PER_MINUTE,
    summary: 'List your audiobooks (no download links)', request: { query: pageQuery },
    responses: {
      200: { description: 'A page of your books, newest first, and how many there are', schema: bookListResponse },
      400: { description: liveKeyOnly },
    },
    handler: async (ctx, { query }) => {
      ctx.body = await service.list(query, ctx.state.auth!);
    },
  });

  route({
    method: 'GET', path: '/audiobooks/:bookId', auth: 'required', name: 'audiobooks_get', perMinute: READS_PER_MINUTE,
    summary: 'One audiobook with chapters, progress and links',
    responses: {
      200: { description: 'The book, its chapters and their download links (24 hours)', schema: bookResponse },
      400: { description: liveKeyOnly },
      ...bookNotFound,
    },
    handler: async (ctx) => {
      ctx.body = await service.get(ctx.params.bookId, ctx.state.auth!);
    },
  });

  route<AddChapterBody, unknown>({
    method: 'POST', path: '/audiobooks/:bookId/chapters', auth: 'required', name: 'audiobooks_chapters', perMinute: CHAPTERS_PER_MINUTE,
    jsonLimit: CHAPTER_JSON_LIMIT, summary: 'Add a chapter, or append segments to a chapter not yet started', request: { body: addChapterBody },
    description: 'Without `appendTo`: a new chapter (201). With `appendTo`: segments appended to that chapter while it has not started rendering (200); '
      + '`afterSegment` is its current segment count. A chapter added to a started book joins it and is billed when it renders.',
    responses: {
      200: { description: 'Appended (`appendTo`): the chapter, the book\'s totals and `chapterCharsMax`', schema: chapterAddedResponse },
      201: { description: 'A new chapter: the chapter, the book\'s totals and `chapterCharsMax`', schema: chapterAddedResponse },
      400: {
        description: `${liveKeyOnly}; \`chapter_over_plan_limit\` (with \`chapterCharsMax\`), \`too_many_chapters\`, \`book_too_long\`, \`too_many_voices\`, `
          + `\`unknown_speaker\` (a segment's speaker is not in the cast); ${voiceRefusals}`,
        schema: chapterRefusalFields,
      },
      404: { description: '`book_not_found`: no such audiobook, or another account\'s; `chapter_not_found`: no chapter `appendTo`' },
      409: {
        description: '`segment_mismatch` (`afterSegment` is not the chapter\'s segment count; shows how it ends), `duplicate_segments` (the chapter already ends with them), '
          + '`duplicate_chapter` (identical to the last chapter), `chapter_started` (append to a chapter that has started rendering), `cast_conflict` (the speaker has another voice)',
        schema: chapterConflictFields,
      },
      429: { description: '`CONCURRENT_CONFLICT`: other chapters were being added to this book at the same moment; retry in 1 second' },
    },
    handler: async (ctx, { body }) => {
      const result = await service.addChapter(ctx.params.bookId, body, ctx.state.auth!);
      ctx.status = result.status;
      ctx.body = result.body;
    },
  });

  route({
    method: 'POST', path: '/audiobooks/:bookId/start', auth: 'required', name: 'audiobooks_start', perMinute: WRITES_PER_MINUTE,
    summary: 'Start or resume rendering',
    description: 'Weighs the chapters left to render against every plan that may pay; each chapter is charged when it starts rendering. '
      + 'Failed and cancelled chapters render again. A book already started, or with nothing left to render, is answered unchanged.',
    responses: {
      200: { description: 'The book, `queued`; as it was when already started or when nothing is left to render', schema: bookResponse },
      400: { description: `${liveKeyOnly}; \`no_chapters\`` },
      402: { description: '`insufficient_tokens`: your plans cannot pay the book, or a chapter (`chapter`, `chapterTitle`) when its turn comes; nothing was started', schema: insufficientTokensFields },
      ...bookNotFound,
    },
    handler: async (ctx) => {
      ctx.body = await service.start(ctx.params.bookId, ctx.state.auth!);
    },
  });

  route({
    method: 'POST', path: '/audiobooks/:bookId/cancel', auth: 'required', name: 'audiobooks_cancel', perMinute: WRITES_PER_MINUTE,
    summary: 'Stop rendering; chapters not started are never billed',
    description: 'Chapters not yet rendering are cancelled; a chapter already rendering finishes. A cancelled book is answered unchanged.',
    responses: {
      200: { description: 'The book, `cancelled`', schema: bookResponse },
      400: { description: liveKeyOnly },
      ...bookNotFound,
      409: { description: '`book_not_started` (a draft) or `book_finished`: only a queued or rendering book can be cancelled', schema: cancelConflictFields },
    },
    handler: async (ctx) => {
      ctx.body = await service.cancel(ctx.params.bookId, ctx.state.auth!);
    },
  });

  route<unknown, PageQuery>({
    method: 'GET', path: '/library', auth: 'required', name: 'library_list', perMinute: READS_PER_MINUTE,
    summary: 'Finished audiobook chapters of the account', request: { query: pageQuery },
    responses: {
      200: { description: 'A page of finished chapters, newest first, with download links (24 hours)', schema: libraryResponse },
      400: { description: liveKeyOnly },
    },
    handler: async (ctx, { query }) => {
      ctx.body = await service.library(query, ctx.state.auth!);
    },
  });

  route<unknown, { limit: number }>({
    method: 'GET', path: '/library/notifications', auth: 'required', name: 'library_notifications', perMinute: READS_PER_MINUTE,
    summary: 'Notifications of finished audiobooks', request: { query: notificationsQuery },
    responses: {
      200: { description: 'One notification per finished book run, newest first', schema: notificationsResponse },
      400: { description: liveKeyOnly },
    },
    handler: async (ctx, { query }) => {
      ctx.body = await service.notifications(query.limit, ctx.state.auth!);
    },
  });
}
