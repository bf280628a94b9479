import type Koa from 'koa';
import { koaBody } from 'koa-body';
import { refusingBodyReadErrors } from '../../core/http/body-read.ts';
import { toApiError } from '../../core/http/envelopes.ts';
import { applyPageSecurity } from '../../core/http/page-security.ts';
import type { Logger } from '../../core/logger.ts';
import { messageBody, page } from './views.ts';

/** Reads an HTML form post (application/x-www-form-urlencoded, at most 16 KB). */
export const formBody = refusingBodyReadErrors(koaBody({ urlencoded: true, json: false, multipart: false, text: false, formLimit: '16kb' }));

export function field(ctx: Koa.Context, name: string): string {
  const value = (ctx.request.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
}

/** Renders a whole page with the page security headers. */
export function renderPage(ctx: Koa.Context, title: string, body: (nonce: string) => string, options: { status?: number; formActions?: string[] } = {}): void {
  const { nonce } = applyPageSecurity(ctx, { formActions: options.formActions });
  ctx.status = options.status ?? 200;
  ctx.type = 'html';
  ctx.body = page(nonce, title, body(nonce));
}

/** Refusals on a page become a page (with the refusal's status), not a JSON envelope; `jsonPrefixes` keep the envelope. */
export function htmlErrors(logger: Logger, jsonPrefixes: string[] = []): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      if (ctx.respond === false || ctx.headerSent || jsonPrefixes.some((prefix) => ctx.path.startsWith(prefix))) throw err;
      const apiError = toApiError(err, logger);
      if (apiError.fields.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(apiError.fields.retryAfterSeconds));
      const message = Array.isArray(apiError.messages) ? apiError.messages.join(' ') : apiError.messages;
      renderPage(ctx, 'Something went wrong', () => messageBody('Something went wrong', message), { status: apiError.status });
    }
  };
}

/** Only a path on this site: `/…` but not `//…` (which would leave the site). */
export function safeReturnPath(value: unknown, fallback: string): string {
  return typeof value === 'string' && /^\/(?![/\\])[^\s]*$/.test(value) ? value : fallback;
}
