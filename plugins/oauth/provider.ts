import { createHmac, randomBytes } from 'node:crypto';
import Provider, { errors, interactionPolicy, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import type { IdentityService } from '../../core/identity/service.ts';
import { SESSION_COOKIE } from '../../core/identity/web.ts';
import { applyPageSecurity } from '../../core/http/page-security.ts';
import type { Logger } from '../../core/logger.ts';
import type { OAuthStore } from './store.ts';
import { adapterFactory } from './adapter.ts';
import { signingKeys } from './keys.ts';
import { isLoopbackRedirect, sameLoopbackRedirect, redirectUriRefusal } from './redirects.ts';
import { publicFetch } from './outbound-fetch.ts';
import { acceptIssuedSecretOfPublicClients } from './public-client-secret.ts';
import { applyPageSecurityToFormPost, onlyScopes } from './authorization-params.ts';
import { messageBody, page } from './views.ts';

/**
 * The OAuth 2.1 authorization server: panva's oidc-provider, configured for
 * SPEC Authentication 7 (authorization code with PKCE S256 always, dynamic
 * registration, client ID metadata documents, scopes `tts` and
 * `offline_access`, resource indicators, one-hour opaque access tokens,
 * refresh tokens rotated on every use; reusing a rotated one revokes the
 * whole grant, which the library does). What it lacks is added here and
 * named in the README: loopback redirects on any port for every client, a
 * client_secret in every registration answer (and accepted from a public
 * client), refresh tokens for OAuth 2.1 clients that ask for
 * `offline_access` without OpenID's `prompt=consent`, the tie between its
 * login and the platform's own sign-in session; and what it allows that the
 * platform does not: DPoP (nothing checks proofs), `openid`, plain-http
 * redirects off loopback, sector_identifier_uri, outbound requests to this
 * network (`outbound-fetch.ts`).
 */

export const SCOPE = 'tts';
export const ACCESS_TOKEN_SECONDS = 3600;
const REFRESH_TOKEN_SECONDS = 30 * 24 * 3600;
/** a connection lasts this long at most, however often its refresh token rotates */
const GRANT_SECONDS = 365 * 24 * 3600;

export interface ProviderSettings {
  issuer: string;
  /** resource indicators the access tokens may be issued for ({base_url}/mcp, {base_url}/api/v1) */
  resources: string[];
  /** keys oidc-provider's cookies */
  cookieSecret: string;
  /** every outbound request of the library; public https addresses only (tests: OAUTH_FETCH_OVERRIDES maps an https origin to a loopback server) */
  fetch?: typeof fetch;
}

export interface ProviderDeps {
  store: OAuthStore;
  identity: IdentityService;
  logger: Logger;
}

function identityCheck(identity: IdentityService) {
  // The library's own session is trusted only while the platform's sign-in session
  // of the same user lives: signing out (or an expired session) asks to sign in again.
  return new interactionPolicy.Check('platform_session', 'the platform sign-in session ended', async (ctx: KoaContextWithOIDC) => {
    const accountId = ctx.oidc.session?.accountId;
    if (!accountId) return interactionPolicy.Check.REQUEST_PROMPT;
    const signedIn = await identity.session(ctx.cookies.get(SESSION_COOKIE));
    return signedIn?.user.id === accountId ? interactionPolicy.Check.NO_NEED_TO_PROMPT : interactionPolicy.Check.REQUEST_PROMPT;
  });
}

export async function createProvider(settings: ProviderSettings, deps: ProviderDeps): Promise<Provider> {
  const policy = interactionPolicy.base();
  policy.get('login')!.checks.add(identityCheck(deps.identity));
  const resources = new Set(settings.resources);
  const cookieKey = createHmac('sha256', settings.cookieSecret).update('oauth cookies').digest('base64url');

  const configuration: Configuration = {
    adapter: adapterFactory(deps.store),
    jwks: (await signingKeys(deps.store)) as Configuration['jwks'],
    cookies: {
      keys: [cookieKey],
      names: { session: 'vn_oauth_session', interaction: 'vn_oauth_interaction', resume: 'vn_oauth_resume' },
      long: { signed: true, httpOnly: true, sameSite: 'lax' },
      short: { signed: true, httpOnly: true, sameSite: 'lax' },
    },
    routes: {
      authorization: '/oauth/authorize', token: '/oauth/token', registration: '/oauth/register',
      revocation: '/oauth/revoke', jwks: '/oauth/jwks', introspection: '/oauth/introspect', userinfo: '/oauth/userinfo',
      end_session: '/oauth/end-session', pushed_authorization_request: '/oauth/par', code_verification: '/oauth/device',
      device_authorization: '/oauth/device/auth', backchannel_authentication: '/oauth/backchannel', challenge: '/oauth/challenge', credential: '/oauth/credential',
    },
    // `tts` is listed here too so clients may register it as their `scope` metadata; tokens carry it as the resource's scope.
    // No `email` (or other OpenID) claims: README and SPEC name only these two scopes; `openid` is taken out of requests.
    scopes: [SCOPE, 'offline_access'],
    responseTypes: ['code'],
    clientAuthMethods: ['none', 'client_secret_post', 'client_secret_basic'],
    clientDefaults: { grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' },
    pkce: { required: () => true },
    rotateRefreshToken: true,
    ttl: {
      AccessToken: ACCESS_TOKEN_SECONDS,
      AuthorizationCode: 60,
      IdToken: 3600,
      Interaction: 3600,
      Session: 14 * 24 * 3600,
      Grant: GRANT_SECONDS,
      RefreshToken: REFRESH_TOKEN_SECONDS,
    },
    // Only redirect URIs that keep the code encrypted, and no sector_identifier_uri (it would make registration fetch a URL).
    extraClientMetadata: { properties: ['redirect_uris', 'sector_identifier_uri'], validator: clientMetadataRules },
    features: {
      devInteractions: { enabled: false },
      // Off: the resource side (core's credential verifiers) checks no DPoP proof, so a DPoP-bound token would be a plain bearer token.
      dPoP: { enabled: false },
      registration: { enabled: true, issueRegistrationAccessToken: false },
      registrationManagement: { enabled: false },
      revocation: { enabled: true },
      introspection: { enabled: false },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => settings.resources[0],
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => {
          if (!resources.has(resource)) throw new errors.InvalidTarget(`unknown resource; use one of ${settings.resources.join(', ')}`);
          return { scope: SCOPE, audience: resource, accessTokenTTL: ACCESS_TOKEN_SECONDS, accessTokenFormat: 'opaque' };
        },
      },
      clientIdMetadataDocument: {
        enabled: true,
        ack: 'draft-02',
        // SPEC: a metadata-document client is a public client.
        allowClient: (_ctx, client) => client.clientAuthMethod === 'none',
      },
    },
    async findAccount(_ctx, id) {
      const user = await deps.identity.getUser(id);
      return user ? { accountId: id, claims: () => ({ sub: id }) } : undefined;
    },
    interactions: { policy, url: (_ctx, interaction) => `/oauth/interaction/${interaction.uid}` },
    async renderError(ctx, out, error) {
      deps.logger.info('authorization error shown to a person', { error: out.error, description: out.error_description, err: error as Error });
      const { nonce } = applyPageSecurity(ctx as unknown as Parameters<typeof applyPageSecurity>[0]);
      ctx.type = 'html';
      ctx.body = page(nonce, 'Something went wrong', messageBody('Something went wrong', `${out.error}: ${out.error_description ?? 'the request could not be completed'}`));
    },
    fetch: settings.fetch ?? publicFetch,
  };

  const provider = new Provider(settings.issuer, configuration);
  provider.proxy = true;
  allowLoopbackRedirectsOnAnyPort(provider);
  provider.use(applyPageSecurityToFormPost);
  provider.use(onlyScopes([SCOPE, 'offline_access'], SCOPE));
  provider.use(acceptIssuedSecretOfPublicClients(provider));
  provider.use(alwaysIssueClientSecret(deps.store));
  provider.use(advertiseScopes);
  provider.use(offlineAccessWithoutPrompt);
  provider.on('server_error', (_ctx, err) => deps.logger.error('authorization server error', { err }));
  return provider;
}

/**
 * RFC 8252 7.3 and SPEC: a loopback redirect URI (`http://127.0.0.1`,
 * `localhost`, `[::1]`) matches on any port. The library does this for
 * native clients only; MCP clients register as web clients.
 */
function allowLoopbackRedirectsOnAnyPort(provider: Provider): void {
  const prototype = provider.Client.prototype as unknown as { redirectUriAllowed(value: string): boolean; redirectUris: string[] };
  const original = prototype.redirectUriAllowed;
  prototype.redirectUriAllowed = function redirectUriAllowed(this: { redirectUris: string[] }, value: string) {
    if (original.call(this, value)) return true;
    return isLoopbackRedirect(value) && this.redirectUris.some((registered) => sameLoopbackRedirect(registered, value));
  };
}

/**
 * SPEC: dynamic registration always returns a client_secret. The library
 * returns one only to the secret methods; a public (`none`) client gets one
 * here too, stored with its metadata, and keeps authenticating with its
 * client_id alone.
 */
function alwaysIssueClientSecret(store: OAuthStore) {
  return async (ctx: KoaContextWithOIDC, next: () => Promise<void>) => {
    await next();
    if (ctx.oidc?.route !== 'registration' || ctx.status !== 201) return;
    const body = ctx.body as Record<string, unknown>;
    if (typeof body.client_secret === 'string') return;
    const clientId = String(body.client_id);
    const stored = await store.find('Client', clientId, Date.now());
    if (!stored) return;
    const secret = randomBytes(32).toString('base64url');
    await store.upsert({ model: 'Client', id: clientId, payload: { ...stored, client_secret: secret }, expiresAt: null });
    ctx.body = { ...body, client_secret: secret, client_secret_expires_at: 0 };
  };
}

/** extraClientMetadata.validator: runs for every client, registered, stored or from a metadata document. */
function clientMetadataRules(_ctx: unknown, key: string, value: unknown): void {
  if (key === 'sector_identifier_uri' && value !== undefined) {
    throw new errors.InvalidClientMetadata('sector_identifier_uri is not supported (no pairwise subjects here)');
  }
  if (key === 'redirect_uris' && Array.isArray(value)) {
    for (const uri of value) {
      const refusal = redirectUriRefusal(uri);
      if (refusal) throw new errors.InvalidClientMetadata(`redirect_uris ${refusal}`);
    }
  }
}

/** The metadata names the scopes clients ask for (the library lists only its OpenID ones). */
async function advertiseScopes(ctx: KoaContextWithOIDC, next: () => Promise<void>) {
  await next();
  if (ctx.oidc?.route === 'discovery' && ctx.body && typeof ctx.body === 'object') {
    ctx.body = { ...(ctx.body as Record<string, unknown>), scopes_supported: [SCOPE, 'offline_access'] };
  }
}

/**
 * OpenID Connect grants `offline_access` only with `prompt=consent`; OAuth
 * 2.1 clients (most MCP clients) do not send it. Such a request is taken as
 * asking for consent: the person sees the consent page, the client gets its
 * refresh token.
 */
async function offlineAccessWithoutPrompt(ctx: KoaContextWithOIDC, next: () => Promise<void>) {
  if (ctx.method === 'GET' && ctx.path === '/oauth/authorize') {
    const query = new URLSearchParams(ctx.querystring);
    if (query.get('scope')?.split(' ').includes('offline_access') && !query.has('prompt')) {
      query.set('prompt', 'consent');
      ctx.querystring = query.toString();
    }
  }
  await next();
}
