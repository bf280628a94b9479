import test from 'ava';
import http from 'node:http';
import net from 'node:net';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import * as oauth from 'oauth4webapi';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { TestBrowser } from '../helpers/oauth-browser.ts';
import { authorizeInBrowser, createUser, discover, exchangeCode, insecure, refresh, register } from '../helpers/oauth-flow.ts';

/**
 * The authorization server's hardening: no DPoP it cannot enforce, no
 * outbound request to this network (registration, client ID metadata
 * documents), redirect URIs that keep the code encrypted, the issued secret
 * of a public client accepted, only the platform's scopes, CORS on
 * registration, and page headers on the form_post answer.
 */

let p: TestPlatform;
let documents: http.Server;
/** a listener on loopback that counts every connection made to it (the server must never reach it) */
let trap: net.Server;
let trapPort = 0;
let trapConnections = 0;
const CIMD_ORIGIN = 'https://client.example.test';

test.before(async () => {
  documents = http.createServer((req, res) => {
    const docs: Record<string, Record<string, unknown>> = {
      '/http-redirect.json': { client_name: 'Plain http', redirect_uris: ['http://app.example.com/cb'], token_endpoint_auth_method: 'none' },
    };
    const doc = docs[req.url ?? ''];
    res.writeHead(doc ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(doc ? { client_id: `${CIMD_ORIGIN}${req.url}`, ...doc } : {}));
  });
  await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
  trap = net.createServer((socket) => {
    trapConnections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => trap.listen(0, resolve)); // every address, IPv4 and IPv6
  trapPort = (trap.address() as AddressInfo).port;
  p = await startTestPlatform({
    PLUGINS: 'catalog,account,speech,jobs,oauth,mcp', SIGNIN_PER_MINUTE: '1000', OAUTH_REGISTRATIONS_PER_HOUR: '1000',
    OAUTH_FETCH_OVERRIDES: `${CIMD_ORIGIN}=http://127.0.0.1:${(documents.address() as AddressInfo).port}`,
  });
});
test.after.always(async () => {
  await p?.stop();
  documents?.close();
  trap?.close();
});

const registerRaw = (metadata: Record<string, unknown>, headers: Record<string, string> = {}) =>
  fetch(`${p.url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(metadata) });

test('DPoP is neither advertised nor issued (nothing on the resource side checks a proof)', async (t) => {
  const metadata = await (await fetch(`${p.url}/.well-known/oauth-authorization-server`)).json() as Record<string, unknown>;
  t.false('dpop_signing_alg_values_supported' in metadata);
  const user = await createUser(p);
  const as = await discover(p);
  const client = await register(as, { redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none' });
  const redirectUri = 'http://127.0.0.1:45001/callback';
  const resource = `${p.url}/mcp`;
  const { callback, verifier, state } = await authorizeInBrowser({ as, client, redirectUri, resource, user });
  const params = oauth.validateAuthResponse(as, client, callback, state);
  const DPoP = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
  const res = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, verifier, { ...insecure, DPoP, additionalParameters: { resource } });
  const body = await res.json() as { token_type?: string; access_token?: string };
  t.is(res.status, 200);
  t.is(body.token_type?.toLowerCase(), 'bearer');
  t.is((await p.api('/balance', { key: body.access_token! })).status, 200, 'and it is a bearer token everywhere');
});

test('registration refuses sector_identifier_uri without fetching it', async (t) => {
  const before = trapConnections;
  const res = await registerRaw({ redirect_uris: ['https://app.example.com/cb'], sector_identifier_uri: `https://127.0.0.1:${trapPort}/x` });
  t.is(res.status, 400);
  t.is((await res.json() as { error: string }).error, 'invalid_client_metadata');
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.is(trapConnections, before, 'no connection to loopback');
});

test('a client ID metadata document on this network is never fetched; every failure reads the same', async (t) => {
  const as = await discover(p);
  const before = trapConnections;
  const messageOf = async (clientId: string) => {
    const err = await t.throwsAsync(authorizeInBrowser({
      as, client: { client_id: clientId }, redirectUri: 'https://app.example.com/cb', resource: `${p.url}/mcp`, user: { email: 'x@example.com', password: 'x' },
    })) as Error & { status?: number; html?: string };
    t.is(err.status, 400, clientId);
    return /<main>([\s\S]*)<\/main>/.exec(err.html ?? '')?.[1];
  };
  const closed = await new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
  const targets = [
    `https://127.0.0.1:${trapPort}/client.json`, // loopback
    `https://localhost:${trapPort}/client.json`, // a name that resolves to loopback: checked on the resolved address
    `https://[::1]:${trapPort}/client.json`,
    `https://[::ffff:127.0.0.1]:${trapPort}/client.json`, // IPv4-mapped IPv6
    `https://127.0.0.1:${closed}/client.json`, // loopback, nothing listening
    'https://169.254.169.254/latest/meta-data.json', // link-local (cloud metadata)
    'https://10.1.2.3/client.json', 'https://100.64.0.1/client.json', 'https://[fd00::1]/client.json', 'https://0.0.0.0/client.json',
    'https://no-such-host.invalid/client.json', // unreachable (no such name)
  ];
  const messages = new Set<string | undefined>();
  for (const target of targets) messages.add(await messageOf(target));
  t.is(messages.size, 1, [...messages].join('\n'));
  t.regex([...messages][0] ?? '', /invalid_client/);
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.is(trapConnections, before, 'no connection to loopback');
});

test('redirect URIs are https, or http on a loopback host only', async (t) => {
  for (const uri of ['http://app.example.com/cb', 'http://localhost.evil.example/cb', 'http://127.0.0.1.nip.io/cb', 'http://10.0.0.1/cb']) {
    const res = await registerRaw({ redirect_uris: [uri], token_endpoint_auth_method: 'none' });
    t.is(res.status, 400, uri);
    t.is((await res.json() as { error: string }).error, 'invalid_redirect_uri', uri);
  }
  for (const uri of ['https://app.example.com/cb', 'http://127.0.0.1/cb', 'http://localhost:8080/cb', 'http://[::1]/cb']) {
    t.is((await registerRaw({ redirect_uris: [uri], token_endpoint_auth_method: 'none' })).status, 201, uri);
  }
  // The same rule for a client ID metadata document.
  const as = await discover(p);
  const err = await t.throwsAsync(authorizeInBrowser({
    as, client: { client_id: `${CIMD_ORIGIN}/http-redirect.json` }, redirectUri: 'http://app.example.com/cb', resource: `${p.url}/mcp`, user: { email: 'x@example.com', password: 'x' },
  })) as Error & { status?: number };
  t.is(err.status, 400);
});

test('a public client may authenticate with the secret it was issued (as the MCP SDK does); a wrong one is refused', async (t) => {
  const user = await createUser(p);
  const as = await discover(p);
  const client = await register(as, { redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] });
  const redirectUri = 'http://127.0.0.1:45002/callback';
  const resource = `${p.url}/mcp`;
  // What a client that kept only { client_id, client_secret } does: client_secret_basic.
  const stored: oauth.Client = { client_id: client.client_id };
  const first = await authorizeInBrowser({ as, client: stored, redirectUri, resource, user });
  const tokens = await exchangeCode({ as, client: stored, auth: oauth.ClientSecretBasic(client.client_secret), ...first, redirectUri, resource });
  t.truthy(tokens.access_token);
  t.truthy(tokens.refresh_token);
  const renewed = await refresh(as, stored, tokens.refresh_token!, oauth.ClientSecretPost(client.client_secret));
  t.truthy(renewed.access_token, 'client_secret_post too');
  const second = await authorizeInBrowser({ as, client: stored, redirectUri, resource, user });
  const refused = await t.throwsAsync(exchangeCode({ as, client: stored, auth: oauth.ClientSecretBasic('wrong-secret'), ...second, redirectUri, resource })) as { error?: string; cause?: Array<{ parameters: { error?: string } }> };
  t.is(refused.error ?? refused.cause?.[0]?.parameters.error, 'invalid_client');
  // And without any secret, as registered.
  const third = await authorizeInBrowser({ as, client: stored, redirectUri, resource, user });
  t.truthy((await exchangeCode({ as, client: stored, ...third, redirectUri, resource })).access_token);
});

/** A public client's whole code flow asking for `scope`, authorized at `endpoint` (default: the advertised one); the token answer. */
async function grantAsking(scope: string, endpoint?: (as: oauth.AuthorizationServer) => string) {
  const user = await createUser(p);
  const as = await discover(p);
  const client = await register(as, { redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none' });
  const redirectUri = 'http://127.0.0.1:45003/callback';
  const resource = `${p.url}/mcp`;
  const spelled = endpoint ? { ...as, authorization_endpoint: endpoint(as) } : as;
  const { callback, verifier, state } = await authorizeInBrowser({ as: spelled, client, redirectUri, resource, user, scope });
  const params = oauth.validateAuthResponse(as, client, callback, state);
  const res = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, verifier, { ...insecure, additionalParameters: { resource } });
  return { status: res.status, body: await res.json() as Record<string, unknown>, user };
}

test('only tts and offline_access are granted: openid (and email) give no ID token', async (t) => {
  const { status, body, user } = await grantAsking('openid tts email');
  t.is(status, 200);
  t.false('id_token' in body);
  t.is(body.scope, 'tts');
  t.false(JSON.stringify(body).includes(user.email));
});

test('the scope rule holds however the endpoint path is spelled (the library matches any case and one trailing slash)', async (t) => {
  const spellings = [(as: oauth.AuthorizationServer) => `${as.authorization_endpoint}/`, () => `${p.url}/oauth/Authorize`, () => `${p.url}/oauth/AUTHORIZE/`];
  for (const spelling of spellings) {
    const { body } = await grantAsking('openid tts', spelling);
    t.false('id_token' in body, spelling.toString());
    t.is(body.scope, 'tts', spelling.toString());
  }
  // The registration limit and CORS too.
  const res = await fetch(`${p.url}/oauth/Register/`, { method: 'OPTIONS', headers: { origin: 'https://x.example', 'access-control-request-method': 'POST' } });
  t.is(res.headers.get('access-control-allow-origin'), '*');
});

test('registration answers CORS like the token endpoint (browser MCP clients register themselves)', async (t) => {
  const origin = 'https://browser-client.example';
  const preflight = await fetch(`${p.url}/oauth/register`, {
    method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
  });
  t.true(preflight.status === 204 || preflight.status === 200, String(preflight.status));
  t.is(preflight.headers.get('access-control-allow-origin'), '*');
  t.regex(preflight.headers.get('access-control-allow-methods') ?? '', /POST/);
  t.regex(preflight.headers.get('access-control-allow-headers') ?? '', /content-type/i);
  const res = await registerRaw({ redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none' }, { origin });
  t.is(res.status, 201);
  t.is(res.headers.get('access-control-allow-origin'), '*');
});

test('the form_post answer carries the page security headers (its script allowed by hash, its form only to the client)', async (t) => {
  const user = await createUser(p);
  const as = await discover(p);
  const client = await register(as, { redirect_uris: ['https://app.example.com/cb'], token_endpoint_auth_method: 'none' });
  const browser = new TestBrowser();
  const url = new URL(as.authorization_endpoint!);
  const verifier = oauth.generateRandomCodeVerifier();
  const query = {
    client_id: client.client_id, redirect_uri: 'https://app.example.com/cb', response_type: 'code', response_mode: 'form_post', scope: 'tts',
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state: 's1', resource: `${p.url}/mcp`,
  };
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  let { url: at, res } = await browser.follow(url.href);
  let html = await res.text();
  for (let step = 0; step < 4 && !html.includes('https://app.example.com/cb'); step++) {
    const values: Record<string, string> = html.includes('/login"') ? { email: user.email, password: user.password } : { decision: 'allow' };
    ({ url: at, res } = await browser.submit(at, html, values));
    html = await res.text();
  }
  t.is(res.status, 200);
  t.regex(html, /name="code"/, 'the self-submitting page');
  const csp = res.headers.get('content-security-policy') ?? '';
  for (const rule of ["default-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'self' https://app.example.com"]) t.true(csp.includes(rule), `${rule} in ${csp}`);
  const script = /<script>([\s\S]*?)<\/script>/.exec(html)?.[1] ?? '';
  t.true(csp.includes(`'sha256-${createHash('sha256').update(script).digest('base64')}'`), 'its inline script may run');
  t.is(res.headers.get('x-frame-options'), 'DENY');
  t.is(res.headers.get('referrer-policy'), 'no-referrer');
  t.is(res.headers.get('x-content-type-options'), 'nosniff');
  t.is(res.headers.get('cache-control'), 'no-store');
});

test('a token request whose form is over the library\'s 56 KB limit is 400 invalid_request in OAuth\'s JSON shape, not a plain-text 400', async (t) => {
  const res = await fetch(`${p.url}/oauth/token`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `grant_type=authorization_code&code=${'x'.repeat(60 * 1024)}`,
  });
  t.is(res.status, 400);
  t.regex(res.headers.get('content-type') ?? '', /application\/json/);
  t.like(await res.json(), { error: 'invalid_request' });
});

/** GET with a Host of the caller's choosing (fetch sets its own). */
function getWithHost(url: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { body += chunk; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('with PUBLIC_BASE_URL set, the authorization server metadata names its endpoints under it whatever Host the request forged (RFC 8414: the endpoints a client trusts)', async (t) => {
  const pinned = await startTestPlatform({ PLUGINS: 'catalog,account,oauth', PUBLIC_BASE_URL: 'https://api.example.test' });
  t.teardown(() => pinned.stop());
  for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
    const { status, body } = await getWithHost(`${pinned.url}${path}`, 'evil.example');
    t.is(status, 200, path);
    const metadata = JSON.parse(body) as Record<string, string>;
    t.is(metadata.issuer, 'https://api.example.test', path);
    for (const name of ['authorization_endpoint', 'token_endpoint', 'registration_endpoint', 'revocation_endpoint', 'jwks_uri']) {
      t.true(metadata[name]?.startsWith('https://api.example.test/oauth/'), `${path} ${name}: ${metadata[name]}`);
    }
  }
});
