import type Koa from 'koa';
import { ApiError } from '../errors.ts';

/**
 * Failures of reading a request's body that are the client's doing, as
 * refusals in the route's envelope instead of internal errors:
 * - the client closed the request first (raw-body: `stream.not.readable`
 *   when it was gone before the read began, `request.aborted` during it):
 *   a 400 that nobody receives. The same error on a request still open is
 *   ours, and stays a 500;
 * - a body that is not what its `Content-Encoding` says (gzip, deflate or
 *   br that does not decompress): zlib's own error, which carries no status.
 */
export function bodyReadRefusal(err: unknown, req: { destroyed: boolean }): unknown {
  const { type, code, errno } = (err ?? {}) as { type?: unknown; code?: unknown; errno?: unknown };
  if ((type === 'stream.not.readable' || type === 'request.aborted') && req.destroyed) {
    return new ApiError(400, 'The client closed the request before its body was read.');
  }
  // zlib's codes (Z_DATA_ERROR, Z_BUF_ERROR, …) and brotli's (ERR__ERROR_FORMAT_…), each with a numeric errno.
  if (typeof errno === 'number' && typeof code === 'string' && /^(Z_|ERR__ERROR_)/.test(code)) {
    return new ApiError(400, 'The request body could not be decompressed: it is not what its Content-Encoding header says. Send it uncompressed or encoded as declared.', {
      code: 'INVALID_CONTENT_ENCODING',
    });
  }
  return err;
}

/** A body parser (koa-body) whose read failures are refused as above; errors of what runs after it pass through untouched. */
export function refusingBodyReadErrors(parse: Koa.Middleware): Koa.Middleware {
  return async (ctx, next) => {
    let parsed = false;
    await parse(ctx, async () => {
      parsed = true;
      await next();
    }).catch((err: unknown) => {
      throw parsed ? err : bodyReadRefusal(err, ctx.req);
    });
  };
}

/**
 * A request with a body that is not JSON in UTF-8, refused (415) rather than
 * read: another type would be read as empty and silently ignored, and a
 * declared charset other than UTF-8 (RFC 8259 §8.1: JSON exchanged between
 * systems is UTF-8) would be decoded as UTF-8 all the same, turning text in
 * a legacy Vietnamese code page (windows-1258, TCVN3) into replacement
 * characters that would then be spoken and paid for.
 */
export function requireJsonBody(ctx: Koa.Context): void {
  const hasBody = Number(ctx.get('content-length') || 0) > 0 || ctx.get('transfer-encoding') !== '';
  if (!hasBody) return;
  if (!ctx.is('application/json')) {
    throw new ApiError(415, 'Send the request body as JSON with Content-Type: application/json.', { code: 'UNSUPPORTED_MEDIA_TYPE' });
  }
  const charset = ctx.request.charset.toLowerCase();
  if (charset !== '' && charset !== 'utf-8' && charset !== 'utf8') {
    throw new ApiError(415, `Send the JSON body in UTF-8: charset=${ctx.request.charset.slice(0, 40)} is not accepted (declare charset=utf-8 or none).`, {
      code: 'UNSUPPORTED_MEDIA_TYPE',
    });
  }
}
