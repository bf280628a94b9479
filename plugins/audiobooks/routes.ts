import type { RouteRegistrar } from '../../core/plugin.ts';
import { addChapterBody, createBookBody, notificationsQuery, pageQuery, type AddChapterBody, type CreateBookBody, type PageQuery } from './schemas.ts';
import type { createAudiobookService } from './service.ts';

type Service = ReturnType<typeof createAudiobookService>;

/** Per key and operation; SPEC leaves audiobook rates open. */
const WRITES_PER_MINUTE = 120;
const READS_PER_MINUTE = 600;
/** A 200-chapter book is uploaded by a script in one go. */
const CHAPTERS_PER_MINUTE = 600;
/** A 60,000-character chapter is about 180 KB of JSON in Vietnamese. */
const CHAPTER_JSON_LIMIT = '2mb';

export function registerAudiobookRoutes(route: RouteRegistrar, service: Service): void {
  route<CreateBookBody, unknown>({
    method: 'POST', path: '/audiobooks', auth: 'required', name: 'audiobooks_create', perMinute: WRITES_PER_MINUTE,
    summary: 'Create a draft audiobook', request: { body: createBookBody },
    handler: async (ctx, { body }) => {
      ctx.status = 201;
      ctx.body = await service.create(body, ctx.state.auth!);
    },
  });

  route<unknown, PageQuery>({
    method: 'GET', path: '/audiobooks', auth: 'required', name: 'audiobooks_list', perMinute: READS_PER_MINUTE,
    summary: 'List your audiobooks (no download links)', request: { query: pageQuery },
    handler: async (ctx, { query }) => {
      ctx.body = await service.list(query, ctx.state.auth!);
    },
  });

  route({
    method: 'GET', path: '/audiobooks/:bookId', auth: 'required', name: 'audiobooks_get', perMinute: READS_PER_MINUTE,
    summary: 'One audiobook with chapters, progress and links',
    handler: async (ctx) => {
      ctx.body = await service.get(ctx.params.bookId, ctx.state.auth!);
    },
  });

  route<AddChapterBody, unknown>({
    method: 'POST', path: '/audiobooks/:bookId/chapters', auth: 'required', name: 'audiobooks_chapters', perMinute: CHAPTERS_PER_MINUTE,
    jsonLimit: CHAPTER_JSON_LIMIT, summary: 'Add a chapter, or append segments to a chapter not yet started', request: { body: addChapterBody },
    handler: async (ctx, { body }) => {
      const result = await service.addChapter(ctx.params.bookId, body, ctx.state.auth!);
      ctx.status = result.status;
      ctx.body = result.body;
    },
  });

  route({
    method: 'POST', path: '/audiobooks/:bookId/start', auth: 'required', name: 'audiobooks_start', perMinute: WRITES_PER_MINUTE,
    summary: 'Start or resume rendering',
    handler: async (ctx) => {
      ctx.body = await service.start(ctx.params.bookId, ctx.state.auth!);
    },
  });

  route({
    method: 'POST', path: '/audiobooks/:bookId/cancel', auth: 'required', name: 'audiobooks_cancel', perMinute: WRITES_PER_MINUTE,
    summary: 'Stop rendering; chapters not started are never billed',
    handler: async (ctx) => {
      ctx.body = await service.cancel(ctx.params.bookId, ctx.state.auth!);
    },
  });

  route<unknown, PageQuery>({
    method: 'GET', path: '/library', auth: 'required', name: 'library_list', perMinute: READS_PER_MINUTE,
    summary: 'Finished audiobook chapters of the account', request: { query: pageQuery },
    handler: async (ctx, { query }) => {
      ctx.body = await service.library(query, ctx.state.auth!);
    },
  });

  route<unknown, { limit: number }>({
    method: 'GET', path: '/library/notifications', auth: 'required', name: 'library_notifications', perMinute: READS_PER_MINUTE,
    summary: 'Notifications of finished audiobooks', request: { query: notificationsQuery },
    handler: async (ctx, { query }) => {
      ctx.body = await service.notifications(query.limit, ctx.state.auth!);
    },
  });
}
