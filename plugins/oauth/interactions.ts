import type Koa from 'koa';
import type Router from '@koa/router';
import type Provider from 'oidc-provider';
import type { IdentityService } from '../../core/identity/service.ts';
import { requireCsrf, setSessionCookie, visitor } from '../../core/identity/web.ts';
import { DomainError } from '../../core/errors.ts';
import { toApiError } from '../../core/http/envelopes.ts';
import { consentBody, signInBody } from './views.ts';
import { field, formBody, renderPage } from './forms.ts';

/**
 * The two prompts of an authorization request, as pages: sign in (skipped
 * when the platform's sign-in session is already there) and consent. Both
 * end by handing the result back to oidc-provider, which redirects to the
 * authorization endpoint to continue.
 */

export interface InteractionDeps {
  provider: () => Promise<Provider>;
  identity: IdentityService;
  /** "Sign in with …" of the upstream provider, or null */
  upstreamLabel: string | null;
}

type Details = Awaited<ReturnType<Provider['interactionDetails']>>;

async function details(ctx: Koa.Context, provider: Provider): Promise<Details> {
  let found: Details;
  try {
    found = await provider.interactionDetails(ctx.req, ctx.res);
  } catch {
    throw new DomainError('invalid', 'This sign-in request has expired or was opened in another browser. Start again from the app you were connecting.', { code: 'INTERACTION_EXPIRED' });
  }
  if (found.uid !== (ctx.params as Record<string, string>).uid) throw new DomainError('invalid', 'This sign-in request does not match the one in progress. Start again from the app.', { code: 'INTERACTION_MISMATCH' });
  return found;
}

async function clientName(provider: Provider, clientId: string): Promise<string> {
  const client = await provider.Client.find(clientId).catch(() => undefined);
  return client?.clientName ? String(client.clientName) : clientId;
}

/** Scopes the consent asks for: those the request names that are not granted yet. */
function askedScopes(d: Details): string[] {
  const prompt = d.prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
  const scopes = new Set(prompt.missingOIDCScope ?? []);
  for (const list of Object.values(prompt.missingResourceScopes ?? {})) for (const s of list) scopes.add(s);
  scopes.delete('openid');
  return [...scopes].sort();
}

async function finish(ctx: Koa.Context, provider: Provider, result: Record<string, unknown>): Promise<void> {
  await provider.interactionFinished(ctx.req, ctx.res, result, { mergeWithLastSubmission: false });
  ctx.respond = false;
}

export function interactionRoutes(router: Router, deps: InteractionDeps): void {
  const upstream = (uid: string) => (deps.upstreamLabel ? { label: deps.upstreamLabel, href: `/oauth/upstream/start?return_to=${encodeURIComponent(`/oauth/interaction/${uid}`)}` } : null);

  async function showSignIn(ctx: Koa.Context, d: Details, csrf: string, error: string | null, status = 200, email = '') {
    const name = await clientName(await deps.provider(), String(d.params.client_id));
    renderPage(ctx, 'Sign in', () => signInBody({ action: `/oauth/interaction/${d.uid}/login`, csrf, email, error, upstream: upstream(d.uid), clientName: name }), { status });
  }

  async function showConsent(ctx: Koa.Context, d: Details, csrf: string, email: string) {
    const name = await clientName(await deps.provider(), String(d.params.client_id));
    const redirect = URL.parse(String(d.params.redirect_uri));
    renderPage(ctx, 'Allow access', () => consentBody({
      action: `/oauth/interaction/${d.uid}/consent`, csrf, clientName: name, clientId: String(d.params.client_id),
      redirectHost: redirect?.host ?? '', userEmail: email, scopes: askedScopes(d),
    }), { formActions: redirect ? [redirect.origin] : [] });
  }

  router.get('/oauth/interaction/:uid', async (ctx) => {
    const provider = await deps.provider();
    const d = await details(ctx, provider);
    const who = await visitor(ctx, deps.identity);
    if (d.prompt.name === 'login') {
      if (who.signedIn) return finish(ctx, provider, { login: { accountId: who.signedIn.user.id } });
      return showSignIn(ctx, d, who.csrf, null);
    }
    if (d.prompt.name === 'consent') {
      if (!who.signedIn || who.signedIn.user.id !== d.session?.accountId) {
        throw new DomainError('forbidden', 'You are no longer signed in as the user who started this request. Start again from the app.', { code: 'INTERACTION_USER_CHANGED' });
      }
      return showConsent(ctx, d, who.csrf, who.signedIn.user.email);
    }
    throw new DomainError('invalid', `Unsupported step "${d.prompt.name}".`);
  });

  router.post('/oauth/interaction/:uid/login', formBody, async (ctx) => {
    const provider = await deps.provider();
    const d = await details(ctx, provider);
    const who = await visitor(ctx, deps.identity);
    requireCsrf(ctx, deps.identity, who, field(ctx, 'csrf'));
    const email = field(ctx, 'email');
    try {
      const signedIn = await deps.identity.signIn({ email, password: field(ctx, 'password'), client: ctx.ip });
      setSessionCookie(ctx, signedIn);
      return await finish(ctx, provider, { login: { accountId: signedIn.user.id } });
    } catch (err) {
      const refusal = toApiError(err);
      if (refusal.status >= 500) throw err;
      if (refusal.fields.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(refusal.fields.retryAfterSeconds));
      return showSignIn(ctx, d, who.csrf, String(refusal.messages), refusal.status, email);
    }
  });

  router.post('/oauth/interaction/:uid/consent', formBody, async (ctx) => {
    const provider = await deps.provider();
    const d = await details(ctx, provider);
    const who = await visitor(ctx, deps.identity);
    requireCsrf(ctx, deps.identity, who, field(ctx, 'csrf'));
    if (d.prompt.name !== 'consent' || !who.signedIn || who.signedIn.user.id !== d.session?.accountId) {
      throw new DomainError('forbidden', 'This consent does not belong to the signed-in user. Start again from the app.', { code: 'INTERACTION_USER_CHANGED' });
    }
    if (field(ctx, 'decision') !== 'allow') {
      return finish(ctx, provider, { error: 'access_denied', error_description: 'The user did not allow access.' });
    }
    const accountId = who.signedIn.user.id;
    const grant = d.grantId ? await provider.Grant.find(d.grantId) : new provider.Grant({ accountId, clientId: String(d.params.client_id) });
    if (!grant) throw new DomainError('invalid', 'This request changed while you were deciding. Start again from the app.', { code: 'INTERACTION_EXPIRED' });
    const prompt = d.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[]; missingResourceScopes?: Record<string, string[]> };
    if (prompt.missingOIDCScope) grant.addOIDCScope(prompt.missingOIDCScope.join(' '));
    if (prompt.missingOIDCClaims) grant.addOIDCClaims(prompt.missingOIDCClaims);
    for (const [resource, scopes] of Object.entries(prompt.missingResourceScopes ?? {})) grant.addResourceScope(resource, scopes.join(' '));
    const grantId = await grant.save();
    return finish(ctx, provider, { consent: d.grantId ? {} : { grantId } });
  });
}
