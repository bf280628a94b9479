import { randomBytes } from 'node:crypto';
import type Koa from 'koa';
import type { SessionRecord } from '../ports/identity.ts';
import type { IdentityService, PublicUser, SignedIn } from './service.ts';
import { DomainError } from '../errors.ts';

/**
 * The sign-in session and CSRF protection as HTML features see them: one
 * session cookie for the whole site (so signing in once serves the OAuth
 * pages and the console alike) and a double-submit CSRF check whose token is
 * an HMAC of a per-browser nonce cookie and the session it belongs to.
 */

export const SESSION_COOKIE = 'vn_session';
const CSRF_COOKIE = 'vn_csrf';

export interface Visitor {
  /** null when nobody is signed in */
  signedIn: { session: SessionRecord; user: PublicUser } | null;
  /** the token forms carry in their `csrf` field */
  csrf: string;
}

function cookieOptions(ctx: Koa.Context, expires?: Date) {
  return { httpOnly: true, sameSite: 'lax' as const, secure: ctx.secure, path: '/', overwrite: true, ...(expires ? { expires } : {}) };
}

function csrfNonce(ctx: Koa.Context): string {
  let nonce = ctx.cookies.get(CSRF_COOKIE);
  if (!nonce || !/^[A-Za-z0-9_-]{22,64}$/.test(nonce)) {
    nonce = randomBytes(18).toString('base64url');
    ctx.cookies.set(CSRF_COOKIE, nonce, cookieOptions(ctx));
  }
  return nonce;
}

const binding = (nonce: string, session: SessionRecord | null) => `${nonce}:${session?.id ?? ''}`;

/** Who is visiting, and the CSRF token of this browser and session. */
export async function visitor(ctx: Koa.Context, identity: IdentityService): Promise<Visitor> {
  const signedIn = await identity.session(ctx.cookies.get(SESSION_COOKIE));
  return { signedIn, csrf: csrfTokenFor(ctx, identity, signedIn?.session ?? null) };
}

/** The CSRF token of this browser for `session` (a JSON sign-in answers the new session's). */
export function csrfTokenFor(ctx: Koa.Context, identity: IdentityService, session: SessionRecord | null): string {
  return identity.csrfToken(binding(csrfNonce(ctx), session));
}

/**
 * Refuses a form post whose CSRF token does not belong to this browser and
 * session, or that comes from another origin (when the browser says so).
 */
export function requireCsrf(ctx: Koa.Context, identity: IdentityService, who: Visitor, token: unknown): void {
  const origin = ctx.get('origin');
  // Koa 3's ctx.origin is the Origin header itself; the site's own is protocol and host.
  const sameOrigin = !origin || origin === `${ctx.protocol}://${ctx.host}`;
  const nonce = ctx.cookies.get(CSRF_COOKIE);
  if (!sameOrigin || !nonce || typeof token !== 'string' || !identity.checkCsrf(binding(nonce, who.signedIn?.session ?? null), token)) {
    throw new DomainError('forbidden', 'This form has expired or did not come from this site. Reload the page and try again.', { code: 'CSRF_FAILED' });
  }
}

export function setSessionCookie(ctx: Koa.Context, signedIn: SignedIn): void {
  ctx.cookies.set(SESSION_COOKIE, signedIn.token, cookieOptions(ctx, new Date(signedIn.session.expiresAt)));
}

export function clearSessionCookie(ctx: Koa.Context): void {
  ctx.cookies.set(SESSION_COOKIE, '', cookieOptions(ctx, new Date(0)));
}
