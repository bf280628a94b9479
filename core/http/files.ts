import Router from '@koa/router';
import type { Blobs } from '../ports/blobs.ts';
import type { DownloadLinks } from '../downloads.ts';
import { ApiError } from '../errors.ts';

/** `GET /files/<key>?expires=&signature=`: presigned downloads, whatever adapter stores the blob. */
export function fileRoutes(downloads: DownloadLinks, blobs: Blobs): Router {
  const router = new Router();
  router.get('/files/*key', async (ctx) => {
    const raw = ctx.params.key as unknown;
    const key = Array.isArray(raw) ? raw.join('/') : String(raw);
    const { expires, signature } = ctx.query;
    if (typeof expires !== 'string' || typeof signature !== 'string' || !downloads.verify(key, expires, signature)) {
      throw new ApiError(403, 'This download link is invalid or has expired. Request a fresh link.', { code: 'LINK_EXPIRED' });
    }
    const blob = await blobs.open(key);
    if (!blob) throw new ApiError(404, 'The file behind this link no longer exists.', { code: 'FILE_NOT_FOUND' });
    ctx.type = blob.info.contentType;
    ctx.length = blob.info.size;
    ctx.set('Cache-Control', 'private, max-age=3600');
    ctx.body = blob.stream;
  });
  return router;
}
