import type Koa from 'koa';
import type Router from '@koa/router';
import * as oidc from 'openid-client';
import type { IdentityService } from '../../core/identity/service.ts';
import { setSessionCookie } from '../../core/identity/web.ts';
import { DomainError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { OAuthStore } from './store.ts';
import { safeReturnPath } from './forms.ts';

/**
 * Optional sign-in through an upstream OpenID provider (openid-client):
 * authorization code with PKCE, state and nonce; the ID token's verified
 * e-mail must belong to a user created here (nobody gets an account by
 * signing in upstream). The result is the same platform sign-in session a
 * password gives.
 */

export interface UpstreamSettings {
  issuer: string;
  clientId: string;
  clientSecret: string | null;
  label: string;
  /** tests: the upstream is a local http server */
  allowHttp: boolean;
}

const STATE_COOKIE = 'vn_upstream_state';
const STATE_TTL_MS = 10 * 60_000;

export function upstreamRoutes(router: Router, deps: { settings: UpstreamSettings; baseUrl: () => string; store: OAuthStore; identity: IdentityService; logger: Logger }): void {
  const { settings } = deps;
  let discovered: Promise<oidc.Configuration> | null = null;
  const configuration = () => {
    discovered ??= oidc.discovery(new URL(settings.issuer), settings.clientId, settings.clientSecret ?? undefined, undefined,
      settings.allowHttp ? { execute: [oidc.allowInsecureRequests] } : undefined).catch((err: unknown) => {
      discovered = null; // try again on the next sign-in
      deps.logger.error('upstream OpenID provider discovery failed', { err: err as Error });
      throw new DomainError('unavailable', `${settings.label} sign-in is not reachable right now. Try again, or sign in with your password.`, { code: 'UPSTREAM_UNAVAILABLE' });
    });
    return discovered;
  };
  const callbackUrl = () => `${deps.baseUrl()}/oauth/upstream/callback`;
  const cookie = (ctx: Koa.Context, value: string, expires: Date) =>
    ctx.cookies.set(STATE_COOKIE, value, { httpOnly: true, sameSite: 'lax', secure: ctx.secure, path: '/oauth/upstream', expires, overwrite: true });

  router.get('/oauth/upstream/start', async (ctx) => {
    const config = await configuration();
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const returnTo = safeReturnPath(ctx.query.return_to, '/oauth/connected-apps');
    await deps.store.upsert({ model: 'UpstreamLogin', id: state, payload: { verifier, nonce, returnTo }, expiresAt: Date.now() + STATE_TTL_MS });
    cookie(ctx, state, new Date(Date.now() + STATE_TTL_MS));
    ctx.redirect(oidc.buildAuthorizationUrl(config, {
      redirect_uri: callbackUrl(), scope: 'openid email', state, nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    }).href);
  });

  router.get('/oauth/upstream/callback', async (ctx) => {
    const state = ctx.cookies.get(STATE_COOKIE);
    if (!state || state !== ctx.query.state) throw new DomainError('invalid', 'This sign-in did not start in this browser. Start again.', { code: 'UPSTREAM_STATE_MISMATCH' });
    const pending = await deps.store.find('UpstreamLogin', state, Date.now());
    await deps.store.destroy('UpstreamLogin', state);
    cookie(ctx, '', new Date(0));
    if (!pending) throw new DomainError('invalid', 'This sign-in has expired. Start again.', { code: 'UPSTREAM_STATE_EXPIRED' });
    const config = await configuration();
    let claims: { email?: unknown; email_verified?: unknown } | undefined;
    try {
      const tokens = await oidc.authorizationCodeGrant(config, new URL(ctx.originalUrl, callbackUrl()), {
        pkceCodeVerifier: String(pending.verifier), expectedState: state, expectedNonce: String(pending.nonce),
      });
      const idToken = tokens.claims();
      claims = idToken as { email?: unknown; email_verified?: unknown } | undefined;
      // Many providers put the e-mail in the UserInfo answer only.
      if (idToken && typeof idToken.email !== 'string' && config.serverMetadata().userinfo_endpoint) {
        claims = await oidc.fetchUserInfo(config, tokens.access_token, idToken.sub);
      }
    } catch (err) {
      deps.logger.warn('upstream sign-in refused', { err: err as Error });
      throw new DomainError('unauthenticated', `${settings.label} did not confirm who you are. Try again.`, { code: 'UPSTREAM_SIGN_IN_FAILED' });
    }
    const email = typeof claims?.email === 'string' ? claims.email : null;
    if (!email || claims?.email_verified !== true) {
      throw new DomainError('forbidden', `${settings.label} did not share a verified e-mail address, so no VieNeu user can be matched.`, { code: 'UPSTREAM_EMAIL_UNVERIFIED' });
    }
    const user = await deps.identity.findUserByEmail(email);
    if (!user) throw new DomainError('forbidden', `No VieNeu user has the e-mail ${email}. Ask your account's administrator to add you.`, { code: 'UPSTREAM_USER_UNKNOWN' });
    setSessionCookie(ctx, await deps.identity.startSession(user.id, `upstream:${settings.issuer}`));
    ctx.redirect(String(pending.returnTo));
  });
}
