import { randomBytes } from 'node:crypto';
import type Koa from 'koa';

/**
 * Headers of every HTML page the platform serves (sign-in, consent, connected
 * apps, the console): a strict Content-Security-Policy (nothing but the
 * page's own nonce-tagged style and script, no framing, forms only to this
 * origin plus the origins a page names), no referrer, no sniffing, no cache.
 */
export interface PageSecurity {
  /** put `nonce="${nonce}"` on the page's <style> and <script> elements */
  nonce: string;
}

export function applyPageSecurity(ctx: Koa.Context, options: { formActions?: string[] } = {}): PageSecurity {
  const nonce = randomBytes(16).toString('base64');
  // Browsers apply form-action to the redirects after a submit too, so a consent
  // form that ends at a client's redirect URI must name that origin.
  const formAction = ["'self'", ...(options.formActions ?? [])].join(' ');
  ctx.set('Content-Security-Policy', [
    "default-src 'none'", `style-src 'nonce-${nonce}'`, `script-src 'nonce-${nonce}'`, "img-src 'self' data:",
    `form-action ${formAction}`, "frame-ancestors 'none'", "base-uri 'none'",
  ].join('; '));
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
  ctx.set('Cross-Origin-Resource-Policy', 'same-origin');
  ctx.set('Permissions-Policy', 'camera=(), microphone=(), geolocation=(), payment=()');
  if (ctx.secure) ctx.set('Strict-Transport-Security', 'max-age=31536000; includeSubDomains');
  return { nonce };
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}
