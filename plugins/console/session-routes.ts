import type Koa from 'koa';
import type Router from '@koa/router';
import Joi from 'joi';
import { koaBody } from 'koa-body';
import type { IdentityService } from '../../core/identity/service.ts';
import { SESSION_COOKIE, clearSessionCookie, csrfTokenFor, requireCsrf, setSessionCookie, visitor, type Visitor } from '../../core/identity/web.ts';
import { DomainError } from '../../core/errors.ts';
import { validate } from '../../core/http/validate.ts';
import type { ConsoleTokens } from './api-token.ts';

/**
 * The console's own session routes (JSON, same-origin only): who is signed
 * in, signing in and out with the platform's users, sessions, lockout and
 * CSRF protection (core/identity, shared with the OAuth sign-in pages), and
 * the short-lived API token the front end sends to `/api/v1`.
 */

/** JSON bodies of the console's routes: small, JSON only. */
export const jsonBody = koaBody({ json: true, urlencoded: false, multipart: false, text: false, jsonLimit: '16kb', jsonStrict: true });

export interface SignedInVisitor extends Visitor {
  signedIn: NonNullable<Visitor['signedIn']>;
}

const signInBody = Joi.object<{ email: string; password: string }>({
  email: Joi.string().trim().max(254).required(),
  password: Joi.string().max(200).required(),
});

/** The visitor when signed in; otherwise 401 SIGN_IN_REQUIRED. Every answer of a session route is private. */
export async function signedInVisitor(ctx: Koa.Context, identity: IdentityService): Promise<SignedInVisitor> {
  ctx.set('Cache-Control', 'no-store');
  const who = await visitor(ctx, identity);
  if (!who.signedIn) throw new DomainError('unauthenticated', 'Sign in first (the session cookie is missing or expired).', { code: 'SIGN_IN_REQUIRED' });
  return who as SignedInVisitor;
}

/** A state-changing request: the CSRF token of this browser and session in `X-CSRF-Token`, and no foreign Origin. */
export function requireCsrfHeader(ctx: Koa.Context, identity: IdentityService, who: Visitor): void {
  requireCsrf(ctx, identity, who, ctx.get('x-csrf-token'));
}

export function sessionRoutes(router: Router, deps: { identity: IdentityService; tokens: ConsoleTokens }): void {
  const { identity } = deps;

  function describe(who: Visitor) {
    if (!who.signedIn) return { signedIn: false, csrf: who.csrf };
    const { user, session } = who.signedIn;
    return {
      signedIn: true,
      csrf: who.csrf,
      user: { id: user.id, email: user.email, name: user.name, accountId: user.accountId },
      sessionExpiresAt: session.expiresAt,
      api: deps.tokens.mint(session.id),
    };
  }

  // Reading it mints a fresh API token: the front end calls it on load and before its token runs out.
  router.get('/console/api/session', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = describe(await visitor(ctx, identity));
  });

  router.post('/console/api/sign-in', jsonBody, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const who = await visitor(ctx, identity);
    requireCsrfHeader(ctx, identity, who);
    const { email, password } = validate(signInBody, ctx.request.body);
    const signedIn = await identity.signIn({ email, password, client: ctx.ip });
    setSessionCookie(ctx, signedIn);
    // The CSRF token is bound to the session: the new session gets a new one.
    ctx.body = describe({ signedIn: { session: signedIn.session, user: signedIn.user }, csrf: csrfTokenFor(ctx, identity, signedIn.session) });
  });

  router.post('/console/api/sign-out', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const who = await visitor(ctx, identity);
    requireCsrfHeader(ctx, identity, who);
    await identity.signOut(ctx.cookies.get(SESSION_COOKIE));
    clearSessionCookie(ctx);
    ctx.status = 204;
  });
}
