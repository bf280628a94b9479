import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { TestBrowser, linkOf } from '../helpers/oauth-browser.ts';
import { createUser, discover, exchangeCode, register } from '../helpers/oauth-flow.ts';
import * as oauth from 'oauth4webapi';

/**
 * Sign-in through an upstream OpenID provider (openid-client): a second
 * oidc-provider plays the company's identity provider. Its verified e-mail
 * must belong to a user created here; the result is the same sign-in session
 * a password gives, in the console pages and in an MCP client's OAuth flow.
 */

let p: TestPlatform;
let upstream: http.Server;

test.before(async () => {
  let handler: http.RequestListener = (_req, res) => res.end();
  upstream = http.createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  p = await startTestPlatform({
    PLUGINS: 'catalog,account,speech,jobs,oauth,mcp', SIGNIN_PER_MINUTE: '1000',
    OAUTH_UPSTREAM_ISSUER: issuer, OAUTH_UPSTREAM_CLIENT_ID: 'vieneu', OAUTH_UPSTREAM_CLIENT_SECRET: 'upstream-client-secret-0123',
    OAUTH_UPSTREAM_NAME: 'Test IdP', OAUTH_UPSTREAM_ALLOW_HTTP: '1',
  });
  // The identity provider: its dev login form takes any login as the subject, here an e-mail.
  const idp = new Provider(issuer, {
    clients: [{
      client_id: 'vieneu', client_secret: 'upstream-client-secret-0123', redirect_uris: [`${p.url}/oauth/upstream/callback`],
      token_endpoint_auth_method: 'client_secret_post', grant_types: ['authorization_code'], response_types: ['code'],
    }],
    claims: { email: ['email', 'email_verified'] },
    features: { devInteractions: { enabled: true } },
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub, email: sub.replace(/^unverified:/, ''), email_verified: !sub.startsWith('unverified:') }) }),
    cookies: { keys: ['upstream-test-cookie-key'] },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600 },
  });
  handler = idp.callback();
});
test.after.always(async () => {
  await p?.stop();
  upstream?.close();
});

/** Signs in at the identity provider's dev pages and comes back. */
async function viaUpstream(browser: TestBrowser, start: string, login: string) {
  let { url, res } = await browser.follow(start);
  for (let i = 0; i < 4 && url.startsWith(new URL(`${p.url}`).origin) === false; i++) {
    const html = await res.text();
    ({ url, res } = await browser.submit(url, html, html.includes('name="login"') ? { login, password: 'anything' } : {}));
  }
  return { url, res, html: await res.text() };
}

test('a user signs in with the upstream provider and lands signed in', async (t) => {
  const user = await createUser(p, 'upstream.user@example.com');
  const browser = new TestBrowser();
  const signIn = await browser.follow(`${p.url}/oauth/sign-in`);
  const start = new URL(linkOf(await signIn.res.text(), 'Sign in with Test IdP'), p.url).href;
  const done = await viaUpstream(browser, start, user.email);
  t.is(done.url, `${p.url}/oauth/connected-apps`);
  t.regex(done.html, /Signed in as upstream\.user@example\.com/);
});

test('an upstream e-mail without a user here, or not verified, signs no one in', async (t) => {
  const unknown = await viaUpstream(new TestBrowser(), `${p.url}/oauth/upstream/start`, 'stranger@example.com');
  t.is(unknown.res.status, 403);
  t.regex(unknown.html, /No VieNeu user has the e-mail stranger@example\.com/);
  await createUser(p, 'unverified.user@example.com');
  const unverified = await viaUpstream(new TestBrowser(), `${p.url}/oauth/upstream/start`, 'unverified:unverified.user@example.com');
  t.is(unverified.res.status, 403);
  t.regex(unverified.html, /verified e-mail/);
});

test('a callback that did not start in this browser is refused', async (t) => {
  const res = await new TestBrowser().request(`${p.url}/oauth/upstream/callback?code=x&state=y`);
  t.is(res.status, 400);
});

test('an MCP client\'s OAuth flow can sign in through the upstream provider', async (t) => {
  const user = await createUser(p, 'mcp.upstream@example.com');
  const as = await discover(p);
  const client = await register(as, { client_name: 'Upstream MCP', redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none' });
  const redirectUri = 'http://127.0.0.1:45000/callback';
  const resource = `${p.url}/mcp`;
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  for (const [k, v] of Object.entries({ client_id: client.client_id, redirect_uri: redirectUri, response_type: 'code', scope: 'tts', code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, resource })) url.searchParams.set(k, v);
  const browser = new TestBrowser();
  const login = await browser.follow(url.href);
  const start = new URL(linkOf(await login.res.text(), 'Sign in with Test IdP'), login.url).href;
  const back = await viaUpstream(browser, start, user.email);
  t.regex(back.html, /Connect Upstream MCP\?/, 'back at the consent step, signed in');
  const atClient = (u: string) => u.startsWith(redirectUri);
  const { url: callback } = await browser.submit(back.url, back.html, { decision: 'allow' }, atClient);
  const tokens = await exchangeCode({ as, client, callback: new URL(callback), state, verifier, redirectUri, resource });
  t.is((await p.api('/balance', { key: tokens.access_token })).status, 200);
});
