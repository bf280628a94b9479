import * as oauth from 'oauth4webapi';
import { TestBrowser } from './oauth-browser.ts';
import type { TestPlatform } from './platform.ts';

/**
 * The OAuth 2.1 client side of the tests, driven by oauth4webapi: metadata
 * discovery, dynamic registration, the authorization request with PKCE S256
 * (a TestBrowser signs in and consents), the code exchange and refreshes.
 */

export const insecure = { [oauth.allowInsecureRequests]: true } as const;

export interface TestUser {
  accountId: string;
  apiKey: string;
  grantId: string;
  email: string;
  password: string;
  userId: string;
}

/** An account with a plan, a key and a user who can sign in. */
export async function createUser(p: TestPlatform, email = `user-${Math.random().toString(36).slice(2, 10)}@example.com`, grant: Record<string, unknown> = {}): Promise<TestUser> {
  const { accountId, apiKey, grantId } = await p.bootstrap({ grant: { totalTokens: 1_000_000, ...grant } });
  const password = 'correct horse battery staple';
  const res = await p.admin(`/accounts/${accountId}/users`, { method: 'POST', json: { email, password } });
  if (res.status !== 201) throw new Error(`create user: ${res.status} ${await res.text()}`);
  const user = (await res.json()) as { id: string };
  return { accountId, apiKey, grantId, email, password, userId: user.id };
}

export async function discover(p: TestPlatform): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(p.url);
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
}

export async function register(as: oauth.AuthorizationServer, metadata: Record<string, unknown>): Promise<oauth.Client & { client_secret: string }> {
  const res = await fetch(as.registration_endpoint!, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(metadata) });
  if (res.status !== 201) throw new Error(`registration: ${res.status} ${await res.text()}`);
  return (await res.json()) as oauth.Client & { client_secret: string };
}

export interface AuthorizeOptions {
  as: oauth.AuthorizationServer;
  client: oauth.Client;
  redirectUri: string;
  resource: string;
  scope?: string;
  user: { email: string; password: string };
  browser?: TestBrowser;
  /** raw parameters instead of the PKCE S256 ones (negative tests) */
  override?: Record<string, string | null>;
  decision?: 'allow' | 'deny';
}

/** Runs the authorization request to the redirect back to the client; returns the callback URL and the PKCE verifier. */
export async function authorizeInBrowser(o: AuthorizeOptions): Promise<{ callback: URL; verifier: string; state: string; browser: TestBrowser }> {
  const browser = o.browser ?? new TestBrowser();
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(o.as.authorization_endpoint!);
  const params: Record<string, string | null> = {
    client_id: o.client.client_id, redirect_uri: o.redirectUri, response_type: 'code', scope: o.scope ?? 'tts offline_access',
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, resource: o.resource, ...o.override,
  };
  for (const [k, v] of Object.entries(params)) if (v !== null) url.searchParams.set(k, v);
  const atClient = (u: string) => u.startsWith(o.redirectUri.split('?')[0]);
  let { url: at, res } = await browser.follow(url.href, {}, atClient);
  for (let step = 0; step < 6 && !atClient(at); step++) {
    const html = await res.text();
    if (res.status !== 200) throw Object.assign(new Error(`authorization page ${res.status}: ${html.slice(0, 500)}`), { status: res.status, html });
    if (html.includes('/login"')) ({ url: at, res } = await browser.submit(at, html, { email: o.user.email, password: o.user.password }, atClient));
    else if (html.includes('/consent"')) ({ url: at, res } = await browser.submit(at, html, { decision: o.decision ?? 'allow' }, atClient));
    else throw new Error(`unexpected page ${at}: ${html.slice(0, 500)}`);
  }
  if (!atClient(at)) throw new Error(`the flow did not come back to the client (at ${at})`);
  return { callback: new URL(at), verifier, state, browser };
}

export async function exchangeCode(o: { as: oauth.AuthorizationServer; client: oauth.Client; auth?: oauth.ClientAuth; callback: URL; state: string; verifier: string; redirectUri: string; resource: string }) {
  const params = oauth.validateAuthResponse(o.as, o.client, o.callback, o.state);
  const response = await oauth.authorizationCodeGrantRequest(o.as, o.client, o.auth ?? oauth.None(), params, o.redirectUri, o.verifier, {
    ...insecure, additionalParameters: { resource: o.resource },
  });
  return oauth.processAuthorizationCodeResponse(o.as, o.client, response);
}

export async function refresh(as: oauth.AuthorizationServer, client: oauth.Client, refreshToken: string, auth: oauth.ClientAuth = oauth.None()) {
  const response = await oauth.refreshTokenGrantRequest(as, client, auth, refreshToken, insecure);
  return oauth.processRefreshTokenResponse(as, client, response);
}

/** The whole flow for a fresh public client: registration, authorization with PKCE, code exchange. */
export async function connectApp(p: TestPlatform, user: { email: string; password: string }, clientName = 'Test MCP client') {
  const as = await discover(p);
  const client = await register(as, {
    client_name: clientName, redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
  });
  const redirectUri = 'http://127.0.0.1:49152/callback';
  const resource = `${p.url}/mcp`;
  const { callback, verifier, state, browser } = await authorizeInBrowser({ as, client, redirectUri, resource, user });
  const tokens = await exchangeCode({ as, client, callback, state, verifier, redirectUri, resource });
  return { as, client, tokens, browser, redirectUri, resource };
}
