import type Koa from 'koa';
import type Router from '@koa/router';
import type { IdentityService } from '../../core/identity/service.ts';
import { SESSION_COOKIE, clearSessionCookie, requireCsrf, setSessionCookie, visitor, type Visitor } from '../../core/identity/web.ts';
import { DomainError } from '../../core/errors.ts';
import { toApiError } from '../../core/http/envelopes.ts';
import type { Connections } from './connections.ts';
import { connectedAppsBody, signInBody } from './views.ts';
import { field, formBody, renderPage, safeReturnPath } from './forms.ts';

/**
 * Signing in and out outside an authorization request, and the connected
 * apps of the signed-in user: a page (`/oauth/connected-apps`) and JSON
 * routes for other front ends (`GET /oauth/connections`,
 * `DELETE /oauth/connections/{clientId}` with the `X-CSRF-Token` header).
 */

export interface AccountPageDeps {
  identity: IdentityService;
  connections: Connections;
  upstreamLabel: string | null;
}

const CONNECTED_APPS = '/oauth/connected-apps';

export function accountRoutes(router: Router, deps: AccountPageDeps): void {
  const upstream = (returnTo: string) => (deps.upstreamLabel ? { label: deps.upstreamLabel, href: `/oauth/upstream/start?return_to=${encodeURIComponent(returnTo)}` } : null);
  const signInPath = (returnTo: string) => `/oauth/sign-in?return_to=${encodeURIComponent(returnTo)}`;

  function showSignIn(ctx: Koa.Context, who: Visitor, returnTo: string, error: string | null, status = 200, email = '') {
    renderPage(ctx, 'Sign in', () => signInBody({ action: signInPath(returnTo), csrf: who.csrf, email, error, upstream: upstream(returnTo) }), { status });
  }

  router.get('/oauth/sign-in', async (ctx) => {
    const returnTo = safeReturnPath(ctx.query.return_to, CONNECTED_APPS);
    const who = await visitor(ctx, deps.identity);
    if (who.signedIn) return ctx.redirect(returnTo);
    showSignIn(ctx, who, returnTo, null);
  });

  router.post('/oauth/sign-in', formBody, async (ctx) => {
    const returnTo = safeReturnPath(ctx.query.return_to, CONNECTED_APPS);
    const who = await visitor(ctx, deps.identity);
    requireCsrf(ctx, deps.identity, who, field(ctx, 'csrf'));
    const email = field(ctx, 'email');
    try {
      setSessionCookie(ctx, await deps.identity.signIn({ email, password: field(ctx, 'password'), client: ctx.ip }));
    } catch (err) {
      const refusal = toApiError(err);
      if (refusal.status >= 500) throw err;
      if (refusal.fields.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(refusal.fields.retryAfterSeconds));
      return showSignIn(ctx, who, returnTo, String(refusal.messages), refusal.status, email);
    }
    ctx.status = 303;
    ctx.redirect(returnTo);
  });

  router.post('/oauth/sign-out', formBody, async (ctx) => {
    const who = await visitor(ctx, deps.identity);
    requireCsrf(ctx, deps.identity, who, field(ctx, 'csrf'));
    await deps.identity.signOut(ctx.cookies.get(SESSION_COOKIE));
    clearSessionCookie(ctx);
    ctx.status = 303;
    ctx.redirect('/oauth/sign-in');
  });

  router.get(CONNECTED_APPS, async (ctx) => {
    const who = await visitor(ctx, deps.identity);
    if (!who.signedIn) return ctx.redirect(signInPath(CONNECTED_APPS));
    const apps = await deps.connections.list(who.signedIn.user.id);
    const notice = ctx.query.disconnected ? `Disconnected ${String(ctx.query.disconnected)}: its access ended now.` : null;
    renderPage(ctx, 'Connected apps', () => connectedAppsBody({ apps, csrf: who.csrf, userEmail: who.signedIn!.user.email, notice }));
  });

  router.post(`${CONNECTED_APPS}/:clientId/disconnect`, formBody, async (ctx) => {
    const who = await visitor(ctx, deps.identity);
    requireCsrf(ctx, deps.identity, who, field(ctx, 'csrf'));
    if (!who.signedIn) return ctx.redirect(signInPath(CONNECTED_APPS));
    const apps = await deps.connections.list(who.signedIn.user.id);
    const app = apps.find((a) => a.clientId === ctx.params.clientId);
    if (!app) throw new DomainError('not_found', 'This app is not connected to your account.', { code: 'CONNECTION_NOT_FOUND' });
    await deps.connections.disconnect(who.signedIn.user.id, app.clientId);
    ctx.status = 303;
    ctx.redirect(`${CONNECTED_APPS}?disconnected=${encodeURIComponent(app.clientName)}`);
  });

  // JSON for other front ends (the console): the same session cookie, CSRF in a header.
  router.get('/oauth/connections', async (ctx) => {
    const who = await visitor(ctx, deps.identity);
    if (!who.signedIn) throw new DomainError('unauthenticated', 'Sign in first (the session cookie is missing or expired).', { code: 'SIGN_IN_REQUIRED' });
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { apps: await deps.connections.list(who.signedIn.user.id), csrf: who.csrf };
  });

  router.delete('/oauth/connections/:clientId', async (ctx) => {
    const who = await visitor(ctx, deps.identity);
    if (!who.signedIn) throw new DomainError('unauthenticated', 'Sign in first (the session cookie is missing or expired).', { code: 'SIGN_IN_REQUIRED' });
    requireCsrf(ctx, deps.identity, who, ctx.get('x-csrf-token'));
    const ended = await deps.connections.disconnect(who.signedIn.user.id, ctx.params.clientId);
    if (ended === 0) throw new DomainError('not_found', 'This app is not connected to your account.', { code: 'CONNECTION_NOT_FOUND' });
    ctx.status = 204;
  });
}
