import test from 'ava';
import http from 'node:http';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait.ts';
import { connectApp, createUser } from '../helpers/oauth-flow.ts';
import { coreServices } from '../../core/services.ts';

/**
 * SPEC Limits, "Edge": per source address under /api/v1 (3000 a minute,
 * 300 at once) and on /tts/stream (500 a minute, 20 at once); 2 open
 * streams per signed-in user. The limits are lowered here to reach them.
 * SPEC "Tell-apart rules": the edge answers a bare 429 or 503 with an HTML
 * page and none of the X-RateLimit-* headers (nor Retry-After), which
 * belong to the application's per-key limiter. The address comes from
 * X-Forwarded-For only when the peer is a trusted proxy (TRUSTED_PROXIES).
 */

/** Room for the probes that wait for held connections, each of which is a request of its address. */
const RPM = 40;
const STREAM_RPM = 20;

let p: TestPlatform;
test.before(async () => {
  p = await startTestPlatform({
    TRUSTED_PROXIES: '127.0.0.1,10.0.0.0/8',
    EDGE_REQUESTS_PER_MINUTE: String(RPM), EDGE_CONNECTIONS: '2',
    EDGE_STREAM_REQUESTS_PER_MINUTE: String(STREAM_RPM), EDGE_STREAM_CONNECTIONS: '1',
  });
});
test.after.always(async () => {
  await p?.stop();
});

let next = 1;
/** A fresh client address per test, so the tests of one platform do not share a count. */
const address = () => `203.0.113.${next++}`;
const from = (ip: string) => ({ 'x-forwarded-for': ip });

function assertEdgeRefusal(t: import('ava').ExecutionContext, res: Response, status: number, body: string): void {
  t.is(res.status, status);
  t.regex(res.headers.get('content-type') ?? '', /^text\/html/);
  t.regex(body, new RegExp(`<title>${status} `));
  for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after']) t.is(res.headers.get(name), null, name);
}

/** How many slots of a pool (a user's streams) are held right now. */
async function held(pool: string): Promise<number> {
  return (await p.platform.service(coreServices.counters)).slots.inUse(pool);
}

/** A request whose body never finishes: the server holds it (and its edge slot) until `close()`. */
function holdOpen(path: string, headers: Record<string, string>): { close(): void } {
  const req = http.request(`${p.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': '4096', ...headers } });
  req.on('error', () => undefined);
  req.write('{"text": "Xin chào');
  return { close: () => req.destroy() };
}

test('SPEC Limits: more than the per-address requests per minute under /api/v1 is a bare 429 HTML page; other addresses and paths outside /api/v1 are unaffected', async (t) => {
  const a = address();
  for (let i = 0; i < RPM; i++) t.is((await p.api('/engines', { headers: from(a) })).status, 200);
  const refused = await p.api('/engines', { headers: from(a) });
  assertEdgeRefusal(t, refused, 429, await refused.text());
  t.truthy(refused.headers.get('x-request-id'), 'every response carries X-Request-Id');
  t.is((await p.api('/engines', { headers: from(address()) })).status, 200, 'another address has its own count');
  t.is((await fetch(`${p.url}/healthz`, { headers: from(a) })).status, 200, 'only /api/v1 is limited');
});

test('SPEC Limits: more concurrent connections per address than allowed is a bare 503 HTML page; the slot is freed when a response closes', async (t) => {
  const a = address();
  const { apiKey } = await p.bootstrap();
  const open = [holdOpen('/api/v1/tts', { ...from(a), authorization: `Bearer ${apiKey}` }), holdOpen('/api/v1/tts', { ...from(a), authorization: `Bearer ${apiKey}` })];
  try {
    // Connections are counted in the process; a probe that gets through holds nothing.
    const refused = await waitFor(async () => {
      const res = await p.api('/engines', { headers: from(a) });
      return res.status === 503 ? res : null;
    }, { what: 'a third connection to be refused', intervalMs: 100 });
    assertEdgeRefusal(t, refused!, 503, await refused!.text());
    t.is((await p.api('/engines', { headers: from(address()) })).status, 200, 'another address is not affected');
  } finally {
    open.forEach((h) => h.close());
  }
  await waitFor(async () => (await p.api('/engines', { headers: from(a) })).status === 200, { what: 'the places to be freed when the connections close', intervalMs: 100 });
  t.pass();
});

test('SPEC Limits: /tts/stream has its own per-address limits (requests per minute, connections at once), tighter than the rest of /api/v1', async (t) => {
  const a = address();
  for (let i = 0; i < STREAM_RPM; i++) t.is((await p.api('/tts/stream', { method: 'POST', json: { text: 'Xin chào' }, headers: from(a) })).status, 401);
  const refused = await p.api('/tts/stream', { method: 'POST', json: { text: 'Xin chào' }, headers: from(a) });
  assertEdgeRefusal(t, refused, 429, await refused.text());
  t.is((await p.api('/engines', { headers: from(a) })).status, 200, 'other routes keep the /api/v1 count');

  const b = address();
  const { apiKey } = await p.bootstrap();
  const open = holdOpen('/api/v1/tts/stream', { ...from(b), authorization: `Bearer ${apiKey}` });
  try {
    const busy = await waitFor(async () => {
      const res = await p.api('/tts/stream', { method: 'POST', json: { text: 'Xin chào' }, headers: from(b) });
      return res.status === 503 ? res : null;
    }, { what: 'a second stream connection to be refused', intervalMs: 100 });
    assertEdgeRefusal(t, busy!, 503, await busy!.text());
    t.is((await p.api('/engines', { headers: from(b) })).status, 200);
  } finally {
    open.close();
  }
});

test('X-Forwarded-For is believed only from a trusted proxy, read from the right: a client cannot pick its own address', async (t) => {
  const a = address();
  // A client that writes its own X-Forwarded-For: the trusted proxy appends the real address, which is what counts.
  for (let i = 0; i < RPM; i++) t.is((await p.api('/engines', { headers: from(`198.51.100.${i}, ${a}`) })).status, 200);
  t.is((await p.api('/engines', { headers: from(`198.51.100.99, ${a}`) })).status, 429);
  // Through a chain of trusted proxies (10.0.0.0/8) the first untrusted address from the right is the client.
  t.is((await p.api('/engines', { headers: from(`${a}, 10.1.2.3`) })).status, 429);

  const direct = await startTestPlatform({ EDGE_REQUESTS_PER_MINUTE: '3' });
  try {
    // Without TRUSTED_PROXIES the header is ignored: every call is 127.0.0.1 (the harness has already read the reference once).
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await direct.api('/engines', { headers: from(`203.0.113.${200 + i}`) })).status);
    t.deepEqual(statuses, [200, 200, 429, 429]);
  } finally {
    await direct.stop();
  }
});

test('the OAuth registration limit and the sign-in pages use the same client address; X-Forwarded-Proto counts only from a trusted proxy', async (t) => {
  const metadata = { client_name: 'Edge test client', redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none' };
  const register = (headers: Record<string, string>, target = p) => fetch(`${target.url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(metadata) });
  const limited = await startTestPlatform({ TRUSTED_PROXIES: 'loopback', OAUTH_REGISTRATIONS_PER_HOUR: '1' });
  const untrusted = await startTestPlatform({ OAUTH_REGISTRATIONS_PER_HOUR: '1' });
  try {
    t.is((await register(from('203.0.113.77'), limited)).status, 201);
    t.is((await register(from('203.0.113.78'), limited)).status, 201, 'another address behind the proxy has its own count');
    t.is((await register(from('203.0.113.77'), limited)).status, 429);

    t.is((await register(from('203.0.113.77'), untrusted)).status, 201);
    t.is((await register(from('203.0.113.78'), untrusted)).status, 429, 'without a trusted proxy both are 127.0.0.1');

    const https = { 'x-forwarded-proto': 'https' };
    t.truthy((await fetch(`${limited.url}/oauth/sign-in`, { headers: https })).headers.get('strict-transport-security'), 'https as the trusted proxy says');
    t.is((await fetch(`${untrusted.url}/oauth/sign-in`, { headers: https })).headers.get('strict-transport-security'), null, 'an untrusted peer cannot claim https');
  } finally {
    await Promise.all([limited.stop(), untrusted.stop()]);
  }
});

test('SPEC Limits: 2 open streams per signed-in user (an OAuth access token); the third is 429 STREAM_CONCURRENCY before any charge, and a closed stream frees its place', async (t) => {
  const user = await createUser(p);
  const { tokens } = await connectApp(p, user);
  const bearer = { authorization: `Bearer ${tokens.access_token}` };
  // One address per held stream: the stream location allows one connection per address here.
  const open = [holdOpen('/api/v1/tts/stream', { ...from(address()), ...bearer }), holdOpen('/api/v1/tts/stream', { ...from(address()), ...bearer })];
  const before = await (await p.api('/balance', { key: tokens.access_token, headers: from(address()) })).json();
  try {
    await waitFor(async () => (await held(`streams:user:${user.userId}`)) === 2, { what: 'both streams to be open' });
    const refused = await p.api('/tts/stream', { method: 'POST', key: tokens.access_token, json: { text: 'Xin chào các bạn' }, headers: from(address()) });
    t.is(refused.status, 429);
    const body = await refused.json();
    t.is(body.code, 'STREAM_CONCURRENCY');
    t.regex(body.message, /per signed-in user/);
    const after = await (await p.api('/balance', { key: tokens.access_token, headers: from(address()) })).json();
    t.is(after.remaining, before.remaining, 'nothing charged');
  } finally {
    open.forEach((h) => h.close());
  }
  // Once the held streams are gone the user gets past the limit (a malformed body is then the answer).
  await waitFor(async () => (await p.api('/tts/stream', { method: 'POST', key: tokens.access_token, json: { text: 5 }, headers: from(address()) })).status === 400, { what: 'the slots to be released' });
  t.pass();
});

test('an API key is not a signed-in user: it is held only to the 4 streams of its grant', async (t) => {
  const { apiKey } = await p.bootstrap();
  const bearer = { authorization: `Bearer ${apiKey}` };
  const addresses = [address(), address(), address()];
  const open = addresses.map((a) => holdOpen('/api/v1/tts/stream', { ...from(a), ...bearer }));
  try {
    // Each address may hold one stream connection: a second one is refused once the first is in.
    for (const a of addresses) {
      await waitFor(async () => (await p.api('/tts/stream', { method: 'POST', json: {}, headers: from(a) })).status === 503, { what: 'the stream to be open', intervalMs: 100 });
    }
    const res = await p.api('/tts/stream', { method: 'POST', key: apiKey, json: { text: 5 }, headers: from(address()) });
    t.is(res.status, 400, 'past the user limit, refused only for its body');
  } finally {
    open.forEach((h) => h.close());
  }
});

/** One MCP tools/call (2026-07-28, no handshake) from a client address; the tool calls the API over loopback. */
async function mcpTool(apiKey: string, ip: string, name: string, headers: Record<string, string> = {}) {
  const version = '2026-07-28';
  const res = await fetch(`${p.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream',
      'mcp-protocol-version': version, 'mcp-method': 'tools/call', 'mcp-name': name, ...from(ip), ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {}, _meta: { 'io.modelcontextprotocol/protocolVersion': version, 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': { name: 'edge-test', version: '1' } } } }),
  });
  return (await res.json() as { result: { isError?: boolean; content: Array<{ text: string }> } }).result;
}

test('SPEC Limits: the API calls an MCP tool makes count against the MCP client\'s address, not the server\'s own loopback one that every client shares', async (t) => {
  const bob = await p.bootstrap({ grant: { totalTokens: 1000 } });
  const alice = await p.bootstrap({ grant: { totalTokens: 1000 } });
  const [bobAt, aliceAt] = [address(), address()];
  for (let i = 0; i < RPM; i++) t.not((await mcpTool(bob.apiKey, bobAt, 'get_token_balance')).isError, true, `call ${i + 1}`);
  const over = await mcpTool(bob.apiKey, bobAt, 'get_token_balance');
  t.true(over.isError, 'past the limit of his own address');
  assertEdgeRefusal(t, await p.api('/engines', { headers: from(bobAt) }), 429, '<title>429 ');
  t.not((await mcpTool(alice.apiKey, aliceAt, 'get_token_balance')).isError, true, 'another client\'s tools still work');
  t.is((await p.api('/balance', { key: alice.apiKey, headers: from(aliceAt) })).status, 200);
  // Naming another address takes the process's secret: a client that sends the headers itself keeps its own.
  const spoofed = await p.api('/engines', { headers: { ...from(bobAt), 'x-vieneu-self-call': 'guess', 'x-vieneu-self-client': aliceAt } });
  t.is(spoofed.status, 429);
});
