import { errors, type KoaContextWithOIDC } from 'oidc-provider';

/**
 * Reading and changing a form body before oidc-provider does: the library
 * reads the request stream itself, and once that has been read it takes
 * `req.body` instead (it warns once that an upstream parser was used).
 */

const LIMIT = 56 * 1024; // the library's own limit

export async function readForm(ctx: KoaContextWithOIDC): Promise<URLSearchParams | null> {
  if (!ctx.is('application/x-www-form-urlencoded') || !ctx.req.readable) return null;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > LIMIT) throw new errors.InvalidRequest('failed to parse the request body');
    chunks.push(chunk);
  }
  const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
  writeForm(ctx, form);
  return form;
}

/** What the library reads as the body from now on. */
export function writeForm(ctx: KoaContextWithOIDC, form: URLSearchParams): void {
  (ctx.req as typeof ctx.req & { body?: string }).body = form.toString();
}
