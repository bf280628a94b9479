import { errors, type KoaContextWithOIDC } from 'oidc-provider';

/**
 * Reading and changing a form body before oidc-provider does: the library
 * reads the request stream itself, and once that has been read it takes
 * `req.body` instead (it warns once that an upstream parser was used).
 */

const LIMIT = 56 * 1024; // the library's own limit

/**
 * The form of a urlencoded request (null for any other body), or `refused`
 * once it has answered 400 `invalid_request` itself, in the library's JSON
 * shape: this runs before the library's router, outside its error handling,
 * where a thrown error would be Koa's plain-text 400 (or a 500 for a body
 * cut short).
 */
export async function readForm(ctx: KoaContextWithOIDC): Promise<URLSearchParams | null | 'refused'> {
  if (!ctx.is('application/x-www-form-urlencoded') || !ctx.req.readable) return null;
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of ctx.req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > LIMIT) throw new errors.InvalidRequest('the request body is too large');
      chunks.push(chunk);
    }
  } catch (err) {
    ctx.status = 400;
    ctx.body = { error: 'invalid_request', error_description: err instanceof errors.InvalidRequest ? err.error_description : 'failed to read the request body' };
    return 'refused';
  }
  const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
  writeForm(ctx, form);
  return form;
}

/** What the library reads as the body from now on. */
export function writeForm(ctx: KoaContextWithOIDC, form: URLSearchParams): void {
  (ctx.req as typeof ctx.req & { body?: string }).body = form.toString();
}
