import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oauth from 'oauth4webapi';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { TestBrowser } from '../helpers/oauth-browser.ts';
import { authorizeInBrowser, connectApp, createUser, discover, exchangeCode, insecure, refresh, register } from '../helpers/oauth-flow.ts';

/**
 * SPEC Authentication 7 and MCP server: the MCP SDK client signs in with
 * OAuth 2.1 (flow driven by oauth4webapi), uses the tools, and the refusals:
 * no PKCE or plain PKCE, a wrong redirect, a reused refresh token, a
 * disconnected app, an account without an active plan.
 */

let p: TestPlatform;
let documents: http.Server;
const CIMD_ORIGIN = 'https://client.example.test';

/** Client ID metadata documents, served by the "client" (reached through OAUTH_FETCH_OVERRIDES). */
const metadataDocuments: Record<string, Record<string, unknown>> = {
  '/mcp-client.json': {
    client_name: 'Metadata document client', redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
  },
  '/secret-client.json': { client_name: 'Wants a secret', redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'client_secret_basic' },
};

test.before(async () => {
  documents = http.createServer((req, res) => {
    const doc = metadataDocuments[req.url ?? ''];
    res.writeHead(doc ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(doc ? { client_id: `${CIMD_ORIGIN}${req.url}`, ...doc } : {}));
  });
  await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
  const port = (documents.address() as AddressInfo).port;
  // Every sign-in here comes from 127.0.0.1; the sign-in rate limit has its own test.
  p = await startTestPlatform({
    PLUGINS: 'catalog,account,speech,jobs,usage,oauth,mcp', MCP_POLL_MS: '200', SIGNIN_PER_MINUTE: '1000',
    OAUTH_FETCH_OVERRIDES: `${CIMD_ORIGIN}=http://127.0.0.1:${port}`,
  });
});
test.after.always(async () => {
  await p?.stop();
  documents?.close();
});

async function mcpClient(token: string): Promise<Client> {
  const client = new Client({ name: 'vieneu-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${p.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

const text = (result: any) => result.content.map((c: { text: string }) => c.text).join('\n');

test('the MCP SDK client completes the OAuth flow driven by oauth4webapi and uses the tools; refresh tokens rotate', async (t) => {
  const user = await createUser(p);
  // 1. Unauthenticated: the challenge names the protected resource metadata.
  const challenge = await fetch(`${p.url}/mcp`, {
    method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
  });
  t.is(challenge.status, 401);
  t.is(challenge.headers.get('www-authenticate'), `Bearer resource_metadata="${p.url}/.well-known/oauth-protected-resource"`);
  // 2. RFC 9728 metadata, then RFC 8414 metadata of the authorization server it names.
  const prm = await (await fetch(`${p.url}/.well-known/oauth-protected-resource`)).json() as { resource: string; authorization_servers: string[]; scopes_supported: string[] };
  t.deepEqual(prm, { ...prm, resource: `${p.url}/mcp`, authorization_servers: [p.url], scopes_supported: ['tts', 'offline_access'] });
  const issuer = new URL(prm.authorization_servers[0]);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
  t.deepEqual(as.code_challenge_methods_supported, ['S256']);
  t.true(as.client_id_metadata_document_supported as boolean);
  t.deepEqual(as.scopes_supported, ['tts', 'offline_access']);
  t.deepEqual([...as.token_endpoint_auth_methods_supported!].sort(), ['client_secret_basic', 'client_secret_post', 'none']);
  // 3. Dynamic registration (a public client still gets a secret), 4. PKCE, sign-in, consent, code.
  const client = await register(as, { client_name: 'Test assistant', redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] });
  t.is(typeof client.client_secret, 'string');
  const redirectUri = 'http://127.0.0.1:53682/callback';
  const { callback, verifier, state } = await authorizeInBrowser({ as, client, redirectUri, resource: prm.resource, user });
  t.is(callback.searchParams.get('iss'), p.url, 'the authorization response names its issuer (RFC 9207)');
  const tokens = await exchangeCode({ as, client, callback, state, verifier, redirectUri, resource: prm.resource });
  t.is(tokens.expires_in, 3600, 'access tokens last one hour');
  t.is(tokens.scope, 'tts');
  t.truthy(tokens.refresh_token, 'offline_access gives a refresh token');
  // 5. The SDK client connects with the token and calls the tools.
  const mcp = await mcpClient(tokens.access_token);
  t.truthy((await mcp.listTools()).tools.find((tool) => tool.name === 'text_to_speech'));
  const speech = await mcp.callTool({ name: 'text_to_speech', arguments: { text: 'Xin chào, đây là một ứng dụng đã kết nối.', voice: 'Lan' } });
  t.falsy(speech.isError, text(speech));
  const audio = await fetch((speech.structuredContent as { audioUrl: string }).audioUrl);
  t.is(audio.headers.get('content-type'), 'audio/mpeg');
  t.true((await audio.arrayBuffer()).byteLength > 1000);
  const long = await mcp.callTool({ name: 'text_to_speech', arguments: { text: 'Một đoạn dài hơn một nghìn năm trăm ký tự, đọc thành một công việc. '.repeat(24), speed: null } });
  t.falsy(long.isError, text(long));
  t.deepEqual([(long.structuredContent as { format: string }).format, (long.structuredContent as { route: string }).route], ['wav', 'tts']);
  const search = async (query: string) => ((await mcp.callTool({ name: 'list_voices', arguments: { search: query } })).structuredContent as { voices: Array<{ id: string; missingWords?: string[] }> }).voices;
  t.deepEqual((await search('miền Trung')).map((v) => v.id), ['vi-central-female-huong', 'vi-central-male-hung'], 'region from the fields');
  t.deepEqual((await search('TIN TỨC')).map((v) => v.id), ['vi-north-female-mai'], 'whole words, any case');
  t.deepEqual((await search('ấm áp')).map((v) => [v.id, v.missingWords]), [['vi-north-male-minh', ['áp']]], 'no voice has every word: the closest, with what it lacks');
  t.deepEqual((await search('âm')).map((v) => v.id), [], 'diacritics must match');
  t.deepEqual((await search('chac')).map((v) => v.id), ['vi-central-male-hung'], 'a plain prefix from 4 letters');
  t.deepEqual((await search('một giọng đọc sách')).map((v) => v.id), ['vi-north-male-minh'], 'filler ignored');
  t.is((await search('Lan'))[0].id, 'vi-south-female-lan', 'the exact name first');
  t.deepEqual((await search('nam trong trẻo')).find((v) => v.id === 'vi-north-female-mai')?.missingWords, ['nam', 'trẻo'], 'gender from the field, not from "miền Bắc"');
  await mcp.close();
  // 6. Refresh: a new refresh token every time, and the new access token works.
  const second = await refresh(as, client, tokens.refresh_token!);
  t.not(second.refresh_token, tokens.refresh_token);
  t.not(second.access_token, tokens.access_token);
  const third = await refresh(as, client, second.refresh_token!);
  t.not(third.refresh_token, second.refresh_token);
  const again = await mcpClient(third.access_token);
  const balance = await again.callTool({ name: 'get_token_balance', arguments: {} });
  t.true((balance.structuredContent as { remaining: number }).remaining < 1_000_000, 'the speech was paid from the account\'s plan');
  await again.close();
});

test('an OAuth access token is an API credential: billed, counted and rate-limited per connected app', async (t) => {
  const user = await createUser(p);
  const { tokens } = await connectApp(p, user);
  const before = await (await p.api('/balance', { key: tokens.access_token })).json() as { remaining: number };
  const speech = await p.api('/audio/speech', { key: tokens.access_token, method: 'POST', json: { input: 'Một câu ngắn.', response_format: 'wav' } });
  t.is(speech.status, 200);
  await speech.arrayBuffer();
  const after = await (await p.api('/balance', { key: tokens.access_token })).json() as { remaining: number };
  t.is(before.remaining - after.remaining, 195, '50 characters minimum x 3 x 1.3, as with a key');
  const usage = await p.api('/usage?scope=key', { key: tokens.access_token });
  const body = await usage.json() as { apiKeyId: string };
  t.regex(body.apiKeyId, /^oauth_/, 'usage of scope=key is the connected app\'s');
});

test('PKCE S256 is required: no code_challenge, or the plain method, is refused', async (t) => {
  const user = await createUser(p);
  const as = await discover(p);
  const client = await register(as, { redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none' });
  const redirectUri = 'http://127.0.0.1:40000/callback';
  const base = { as, client, redirectUri, resource: `${p.url}/mcp`, user };
  const none = await authorizeInBrowser({ ...base, override: { code_challenge: null, code_challenge_method: null } });
  t.is(none.callback.searchParams.get('error'), 'invalid_request');
  t.regex(none.callback.searchParams.get('error_description') ?? '', /PKCE/);
  const plain = await authorizeInBrowser({ ...base, override: { code_challenge: 'x'.repeat(43), code_challenge_method: 'plain' } });
  t.is(plain.callback.searchParams.get('error'), 'invalid_request');
  t.is(plain.callback.searchParams.get('code'), null);
});

test('RFC 6749 3.3: a request without `tts` (no scope, only OpenID\'s, offline_access alone) is taken as asking for it, and its token works', async (t) => {
  const user = await createUser(p);
  const as = await discover(p);
  const client = await register(as, {
    redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'],
  });
  const redirectUri = 'http://127.0.0.1:40001/callback';
  const resource = `${p.url}/mcp`;
  for (const [scope, offline] of [[null, false], ['openid profile email', false], ['offline_access', true]] as const) {
    const { callback, verifier, state } = await authorizeInBrowser({ as, client, redirectUri, resource, user, override: { scope } });
    t.is(callback.searchParams.get('error'), null, `scope ${scope}: ${callback.searchParams.get('error_description')}`);
    const tokens = await exchangeCode({ as, client, callback, state, verifier, redirectUri, resource });
    t.is(tokens.scope, 'tts', `scope ${scope}: the access token's scope`);
    t.is(Boolean(tokens.refresh_token), offline, `scope ${scope}: a refresh token only with offline_access`);
    t.is((await p.api('/balance', { key: tokens.access_token })).status, 200, `scope ${scope}`);
  }
});

test('a redirect URI that was not registered is refused (loopback matches on any port, nothing else)', async (t) => {
  const user = await createUser(p);
  const as = await discover(p);
  const client = await register(as, { redirect_uris: ['http://127.0.0.1/callback', 'http://localhost/cb'], token_endpoint_auth_method: 'none' });
  const base = { as, client, resource: `${p.url}/mcp`, user };
  for (const redirectUri of ['https://evil.example/callback', 'http://127.0.0.1:8080/other', 'http://127.0.0.2:8080/callback']) {
    const err = await t.throwsAsync(authorizeInBrowser({ ...base, redirectUri })) as Error & { status?: number; html?: string };
    t.is(err.status, 400, redirectUri);
    t.regex(err.html ?? '', /redirect_uri/, redirectUri);
  }
  const ok = await authorizeInBrowser({ ...base, redirectUri: 'http://localhost:61000/cb' });
  t.truthy(ok.callback.searchParams.get('code'), 'a registered loopback redirect on another port is accepted');
});

test('reusing a rotated refresh token revokes the whole family', async (t) => {
  const user = await createUser(p);
  const { as, client, tokens } = await connectApp(p, user);
  const rotated = await refresh(as, client, tokens.refresh_token!);
  t.is((await p.api('/balance', { key: rotated.access_token })).status, 200);
  const reuse = await t.throwsAsync(refresh(as, client, tokens.refresh_token!)) as { error?: string };
  t.is(reuse.error, 'invalid_grant');
  t.is((await p.api('/balance', { key: rotated.access_token })).status, 401, 'the access token of the family stops working');
  const later = await t.throwsAsync(refresh(as, client, rotated.refresh_token!)) as { error?: string };
  t.is(later.error, 'invalid_grant', 'and so does the newest refresh token');
});

test('a disconnected app\'s token is refused at once', async (t) => {
  const user = await createUser(p);
  const { tokens, browser } = await connectApp(p, user, 'Disconnect me');
  const mcp = await mcpClient(tokens.access_token);
  t.truthy(await mcp.listTools());
  await mcp.close();
  const page = await browser.follow(`${p.url}/oauth/connected-apps`);
  const html = await page.res.text();
  t.is(page.res.status, 200);
  t.regex(html, /Disconnect me/);
  const done = await browser.submit(page.url, html, {}, undefined, '/disconnect');
  t.regex(await done.res.text(), /Disconnected Disconnect me/);
  const refused = await fetch(`${p.url}/mcp`, {
    method: 'POST', headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
  t.is(refused.status, 401);
  t.regex(refused.headers.get('www-authenticate') ?? '', /error="invalid_token".*resource_metadata=/);
  t.is((await p.api('/balance', { key: tokens.access_token })).status, 401);
  const json = await browser.request(`${p.url}/oauth/connections`);
  t.deepEqual((await json.json() as { apps: unknown[] }).apps, []);
});

test('connected apps are listed and disconnected through the JSON routes too (session cookie and CSRF header)', async (t) => {
  const user = await createUser(p);
  const { client, tokens, browser } = await connectApp(p, user, 'JSON app');
  const list = await (await browser.request(`${p.url}/oauth/connections`)).json() as { apps: Array<{ clientId: string; clientName: string; scopes: string[] }>; csrf: string };
  t.deepEqual(list.apps.map((a) => [a.clientId, a.clientName, a.scopes]), [[client.client_id, 'JSON app', ['offline_access', 'tts']]]);
  const noCsrf = await browser.request(`${p.url}/oauth/connections/${client.client_id}`, { method: 'DELETE' });
  t.is(noCsrf.status, 403);
  t.is((await p.api('/balance', { key: tokens.access_token })).status, 200);
  const removed = await browser.request(`${p.url}/oauth/connections/${client.client_id}`, { method: 'DELETE', headers: { 'x-csrf-token': list.csrf } });
  t.is(removed.status, 204);
  t.is((await p.api('/balance', { key: tokens.access_token })).status, 401);
  t.is((await fetch(`${p.url}/oauth/connections`)).status, 401, 'without a session');
});

test('a key of an account without an active plan is refused at connect; so is its users\' OAuth token', async (t) => {
  const user = await createUser(p);
  const { tokens } = await connectApp(p, user);
  t.is((await p.admin(`/grants/${user.grantId}`, { method: 'PATCH', json: { status: 'replaced' } })).status, 200);
  for (const credential of [user.apiKey, tokens.access_token]) {
    const res = await fetch(`${p.url}/mcp`, {
      method: 'POST', headers: { authorization: `Bearer ${credential}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    });
    t.is(res.status, 403);
    t.regex(((await res.json()) as { error: { message: string } }).error.message, /active plan/);
  }
});

test('SPEC Errors GRANT_INACTIVE: an OAuth token whose plans are all spent behaves as a key on a spent plan (reads answer, spending is 403 GRANT_INACTIVE)', async (t) => {
  const user = await createUser(p);
  const { tokens } = await connectApp(p, user);
  t.is((await p.admin(`/grants/${user.grantId}`, { method: 'PATCH', json: { status: 'replaced' } })).status, 200);
  for (const [credential, label] of [[user.apiKey, 'key'], [tokens.access_token, 'token']] as const) {
    t.is((await p.api('/balance', { key: credential })).status, 200, `${label}: GET /balance`);
    t.is((await p.api('/usage', { key: credential })).status, 200, `${label}: GET /usage`);
    const spend = await p.api('/tts', { key: credential, method: 'POST', json: { text: 'Một câu ngắn.' } });
    t.is(spend.status, 403, `${label}: POST /tts`);
    const body = await spend.json() as { code: string; required: number };
    t.is(body.code, 'GRANT_INACTIVE', label);
    t.true(body.required > 0, `${label}: carries required`);
  }
});

test('dynamic registration accepts none, client_secret_post and client_secret_basic and always returns a client_secret', async (t) => {
  const user = await createUser(p);
  const as = await discover(p);
  const redirectUri = 'http://127.0.0.1:41000/callback';
  for (const method of ['client_secret_post', 'client_secret_basic', 'none'] as const) {
    const client = await register(as, { client_name: method, redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: method });
    t.is(client.token_endpoint_auth_method, method);
    t.true(typeof client.client_secret === 'string' && client.client_secret.length >= 32, method);
    const auth = method === 'client_secret_post' ? oauth.ClientSecretPost(client.client_secret) : method === 'client_secret_basic' ? oauth.ClientSecretBasic(client.client_secret) : oauth.None();
    const { callback, verifier, state } = await authorizeInBrowser({ as, client, redirectUri, resource: `${p.url}/mcp`, user });
    const tokens = await exchangeCode({ as, client, auth, callback, state, verifier, redirectUri, resource: `${p.url}/mcp` });
    t.truthy(tokens.access_token, method);
    if (method !== 'none') {
      const second = await authorizeInBrowser({ as, client, redirectUri, resource: `${p.url}/mcp`, user });
      const wrong = method === 'client_secret_post' ? oauth.ClientSecretPost('wrong-secret') : oauth.ClientSecretBasic('wrong-secret');
      const refused = await t.throwsAsync(exchangeCode({ as, client, auth: wrong, ...second, redirectUri, resource: `${p.url}/mcp` })) as { error?: string; status?: number; cause?: Array<{ parameters: { error?: string } }> };
      // Basic answers 401 with a WWW-Authenticate challenge; post answers 401 with the error in the body.
      t.is(refused.error ?? refused.cause?.[0]?.parameters.error, 'invalid_client', `${method} needs its secret`);
    }
  }
});

test('a client identified by a client ID metadata document signs in as a public client; one asking for a secret is refused', async (t) => {
  const user = await createUser(p);
  const as = await discover(p);
  const client = { client_id: `${CIMD_ORIGIN}/mcp-client.json`, token_endpoint_auth_method: 'none' };
  const redirectUri = 'http://127.0.0.1:44000/callback';
  const { callback, verifier, state } = await authorizeInBrowser({ as, client, redirectUri, resource: `${p.url}/mcp`, user });
  const tokens = await exchangeCode({ as, client, callback, state, verifier, redirectUri, resource: `${p.url}/mcp` });
  t.is((await p.api('/balance', { key: tokens.access_token })).status, 200);
  const secretClient = { client_id: `${CIMD_ORIGIN}/secret-client.json` };
  const err = await t.throwsAsync(authorizeInBrowser({ as, client: secretClient, redirectUri, resource: `${p.url}/mcp`, user })) as Error & { status?: number; html?: string };
  t.is(err.status, 400);
  t.regex(err.html ?? '', /invalid_client/);
});

test('a denied consent sends the client access_denied', async (t) => {
  const user = await createUser(p);
  const as = await discover(p);
  const client = await register(as, { redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none' });
  const denied = await authorizeInBrowser({ as, client, redirectUri: 'http://127.0.0.1:42000/callback', resource: `${p.url}/mcp`, user, decision: 'deny' });
  t.is(denied.callback.searchParams.get('error'), 'access_denied');
});

test('the MCP SDK\'s own OAuth client (discovery, registration, PKCE, resource indicator) connects too', async (t) => {
  const user = await createUser(p);
  const browser = new TestBrowser();
  const redirectUrl = 'http://127.0.0.1:43000/callback';
  let information: any;
  let saved: any;
  let verifier = '';
  let code: string | null = null;
  const provider: OAuthClientProvider = {
    get redirectUrl() { return redirectUrl; },
    get clientMetadata() { return { client_name: 'SDK client', redirect_uris: [redirectUrl], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none', scope: 'tts offline_access' }; },
    clientInformation: () => information,
    saveClientInformation: (info) => { information = info; },
    tokens: () => saved,
    saveTokens: (tokens) => { saved = tokens; },
    saveCodeVerifier: (v) => { verifier = v; },
    codeVerifier: () => verifier,
    async redirectToAuthorization(url) {
      const atClient = (u: string) => u.startsWith(redirectUrl);
      let { url: at, res } = await browser.follow(url.href, {}, atClient);
      for (let i = 0; i < 4 && !atClient(at); i++) {
        const html = await res.text();
        ({ url: at, res } = await browser.submit(at, html, html.includes('/login"') ? { email: user.email, password: user.password } : { decision: 'allow' }, atClient));
      }
      code = new URL(at).searchParams.get('code');
    },
  };
  const first = new StreamableHTTPClientTransport(new URL(`${p.url}/mcp`), { authProvider: provider });
  await t.throwsAsync(new Client({ name: 'sdk', version: '1' }).connect(first), { instanceOf: UnauthorizedError });
  t.truthy(code);
  await first.finishAuth(code!);
  t.truthy(saved?.refresh_token);
  const client = new Client({ name: 'sdk', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${p.url}/mcp`), { authProvider: provider }));
  t.truthy((await client.listTools()).tools.length);
  await client.close();
});
