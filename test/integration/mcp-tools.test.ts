import test from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { versionOf } from '../../plugins/mcp/server.ts';

/**
 * SPEC MCP server with an API key: the tools and what they call (billing,
 * links, limits identical to the routes), voice search, errors a model can
 * act on, prompts, UI resources, and the 2026-07-28 revision beside the
 * 2025-era one.
 */

let p: TestPlatform;

test.before(async () => {
  // An allowed origin as copied from an address bar, with its slash (a browser's Origin header has none).
  p = await startTestPlatform({
    PLUGINS: 'catalog,account,speech,jobs,usage,oauth,mcp', MCP_POLL_MS: '200', MCP_TTS_WAIT_SECONDS: '30', RATE_SPEECH_PER_MINUTE: '4',
    MCP_ALLOWED_ORIGINS: 'https://app.example.com/',
  });
});
test.after.always(async () => {
  await p?.stop();
});

async function connect(apiKey: string): Promise<Client> {
  const client = new Client({ name: 'vieneu-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${p.url}/mcp`), { requestInit: { headers: { 'x-api-key': apiKey } } }));
  return client;
}

async function session(grant: Record<string, unknown> = {}) {
  const account = await p.bootstrap({ grant: { totalTokens: 1_000_000, ...grant } });
  return { ...account, mcp: await connect(account.apiKey) };
}

const remaining = async (key: string) => ((await (await p.api('/balance', { key })).json()) as { remaining: number }).remaining;
const text = (result: any): string => result.content.map((c: { text: string }) => c.text).join('\n');

test('the tools are exactly those of SPEC; optional arguments accept null; serverInfo.version is the tool list\'s fingerprint', async (t) => {
  const { mcp } = await session();
  const { tools } = await mcp.listTools();
  t.deepEqual(tools.map((tool) => tool.name), ['list_capabilities', 'list_voices', 'text_to_speech', 'get_speech_status', 'list_emotion_tags', 'get_token_balance']);
  for (const tool of tools) {
    const schema = tool.inputSchema as { properties: Record<string, { type: string | string[] }>; required?: string[] };
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      if (!(schema.required ?? []).includes(name)) t.true(Array.isArray(property.type) && property.type.includes('null'), `${tool.name}.${name} accepts null`);
    }
  }
  const info = mcp.getServerVersion()!;
  t.is(info.name, 'vieneu');
  t.is(info.version, versionOf(tools.map(({ name, title, description, inputSchema, annotations, _meta }) => ({ name, title, description, inputSchema, annotations, ...(_meta ? { _meta } : {}) }))));
  t.not(versionOf(tools.slice(1) as any), info.version, 'another tool list has another version');
  const noTools = ['clone', 'dub', 'srt', 'subtitle'];
  t.false(tools.some((tool) => noTools.some((word) => tool.name.includes(word))), 'cloning and dubbing are not exposed');
  await mcp.close();
});

test('text_to_speech up to 1500 characters: one /audio/speech call, an MP3 link valid 24 hours, billed as the route', async (t) => {
  const { apiKey, mcp } = await session();
  const input = 'Xin chào các bạn. Hôm nay chúng ta thử giọng đọc tiếng Việt qua MCP.';
  const before = await remaining(apiKey);
  const result = await mcp.callTool({ name: 'text_to_speech', arguments: { text: input, voice: 'vi-south-female-lan', speed: 1.1, style: null } });
  t.falsy(result.isError, text(result));
  const data = result.structuredContent as { format: string; audioUrl: string; jobId: string; route: string; linkExpiresInSeconds: number };
  t.is(data.format, 'mp3');
  t.is(data.route, 'audio_speech');
  t.is(data.linkExpiresInSeconds, 86_400);
  const expires = Number(new URL(data.audioUrl).searchParams.get('expires'));
  t.true(Math.abs(expires - (Date.now() / 1000 + 86_400)) < 120, 'the link expires in 24 hours');
  const audio = await fetch(data.audioUrl);
  t.is(audio.headers.get('content-type'), 'audio/mpeg');
  const bytes = Buffer.from(await audio.arrayBuffer());
  t.true(bytes.subarray(0, 3).toString() === 'ID3' || (bytes[0] === 0xff && (bytes[1] & 0xe0) === 0xe0), 'an MP3 file');
  t.is(before - (await remaining(apiKey)), Math.ceil(Math.max(50, [...input].length) * 3 * 1.3), 'charged exactly as POST /audio/speech');
  const job = await (await p.api(`/tts/${data.jobId}`, { key: apiKey })).json() as { status: string };
  t.is(job.status, 'completed', 'the link is the saved copy of the route');
  await mcp.close();
});

test('text_to_speech over 1500 characters: one /tts job, waited on, a WAV link, billed as the route', async (t) => {
  const { apiKey, mcp } = await session();
  const input = 'Một đoạn văn dài để đọc thành sách nói, có nhiều câu nối tiếp nhau. '.repeat(24);
  t.true([...input].length > 1500);
  const before = await remaining(apiKey);
  const result = await mcp.callTool({ name: 'text_to_speech', arguments: { text: input, voice: 'Minh', style: 'storytelling' } });
  t.falsy(result.isError, text(result));
  const data = result.structuredContent as { format: string; status: string; audioUrl: string; route: string; jobId: string };
  t.deepEqual([data.format, data.status, data.route], ['wav', 'completed', 'tts']);
  const audio = await fetch(data.audioUrl);
  t.is(audio.headers.get('content-type'), 'audio/wav');
  t.is(Buffer.from(await audio.arrayBuffer()).subarray(0, 4).toString(), 'RIFF');
  t.is(before - (await remaining(apiKey)), Math.ceil([...input].length * 3 * 1.3), 'charged exactly as POST /tts');
  await mcp.close();
});

test('a long text that is not ready in time gives the job id, and get_speech_status follows it', async (t) => {
  const quick = await startTestPlatform({ PLUGINS: 'catalog,account,speech,jobs,oauth,mcp', MCP_TTS_WAIT_SECONDS: '0', MCP_POLL_MS: '100' });
  t.teardown(() => quick.stop());
  const { apiKey } = await quick.bootstrap({ grant: { totalTokens: 1_000_000 } });
  const mcp = new Client({ name: 'vieneu-test', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${quick.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${apiKey}` } } }));
  const result = await mcp.callTool({ name: 'text_to_speech', arguments: { text: 'Câu này sẽ được xếp hàng chờ xử lý. '.repeat(50) } });
  const data = result.structuredContent as { status: string; jobId: string };
  t.falsy(result.isError);
  t.not(data.status, 'completed');
  t.regex(text(result), new RegExp(`get_speech_status with job_id "${data.jobId}"`));
  let status: any;
  for (let i = 0; i < 100; i++) {
    status = await mcp.callTool({ name: 'get_speech_status', arguments: { job_id: data.jobId } });
    if ((status.structuredContent as { status: string }).status === 'completed') break;
    await new Promise((r) => setTimeout(r, 300));
  }
  t.is(status.structuredContent.status, 'completed');
  t.regex(status.structuredContent.audioUrl, /\.wav\?/);
  await mcp.close();
});

test('list_voices applies the search rules', async (t) => {
  const { mcp } = await session();
  const ids = async (search: string | null) => ((await mcp.callTool({ name: 'list_voices', arguments: { search, limit: null } })).structuredContent as { voices: Array<{ id: string }> }).voices.map((v) => v.id);
  t.is((await ids(null)).length, 6);
  t.deepEqual(await ids('giọng nữ miền Nam'), ['vi-south-female-lan'], 'gender and region from the fields, filler ignored');
  t.deepEqual(await ids('SÁCH'), ['vi-north-male-minh'], 'a whole word of the description, any case');
  t.deepEqual(await ids('trâm'), [], 'diacritics must match');
  t.deepEqual(await ids('huong'), ['vi-central-female-huong'], 'four plain letters match as a prefix');
  t.deepEqual((await ids('Nam'))[0], 'vi-south-male-nam', 'the exact name first');
  const closest = await mcp.callTool({ name: 'list_voices', arguments: { search: 'nữ trầm' } });
  const data = closest.structuredContent as { complete: boolean; voices: Array<{ id: string; missingWords: string[] }> };
  t.false(data.complete);
  t.deepEqual(data.voices.find((v) => v.id === 'vi-north-male-minh')?.missingWords, ['nữ']);
  t.regex(text(closest), /lacks: trầm/);
  await mcp.close();
});

test('the free tools: capabilities, emotion tags, balance', async (t) => {
  const { mcp } = await session({ dailyCap: 50_000 });
  const caps = await mcp.callTool({ name: 'list_capabilities', arguments: {} });
  const c = caps.structuredContent as { tools: Array<{ name: string; paid: boolean }>; engines: Array<{ key: string }>; notOffered: string[] };
  t.deepEqual(c.tools.filter((tool) => tool.paid).map((tool) => tool.name), ['text_to_speech']);
  t.deepEqual(c.engines.map((e) => e.key), ['v4']);
  t.is(c.notOffered.length, 3);
  const tags = await mcp.callTool({ name: 'list_emotion_tags', arguments: {} });
  t.deepEqual((tags.structuredContent as { cueTags: string[] }).cueTags, ['[cười]', '[thở dài]', '[hắng giọng]']);
  const balance = await mcp.callTool({ name: 'get_token_balance', arguments: {} });
  t.is((balance.structuredContent as { plan: { daily: { limit: number } } }).plan.daily.limit, 50_000);
  t.regex(text(balance), /daily 50000\/50000 left/);
  await mcp.close();
});

test('refusals come back as tool errors a model can act on', async (t) => {
  const { mcp } = await session({ totalTokens: 100 });
  const poor = await mcp.callTool({ name: 'text_to_speech', arguments: { text: 'Không đủ token để đọc câu này.' } });
  t.true(poor.isError);
  t.regex(text(poor), /can spend at most \d+ tokens on one request now .* and this needs 195. Tell the user to top up/);
  const rich = await session();
  const voice = await rich.mcp.callTool({ name: 'text_to_speech', arguments: { text: 'Xin chào.', voice: 'alloy' } });
  t.true(voice.isError);
  t.regex(text(voice), /Call list_voices/);
  const tooLong = await rich.mcp.callTool({ name: 'text_to_speech', arguments: { text: 'a'.repeat(50_001) } });
  t.true(tooLong.isError);
  t.regex(text(tooLong), /Invalid arguments.*50000/);
  const missing = await rich.mcp.callTool({ name: 'get_speech_status', arguments: { job_id: 'job_missing' } });
  t.regex(text(missing), /Check the id/);
  // An id no tool returns (a lone surrogate made the path encoding throw: an internal error) is a bad argument.
  const strange = await rich.mcp.callTool({ name: 'get_speech_status', arguments: { job_id: 'job_\ud800' } });
  t.true(strange.isError);
  t.regex(text(strange), /Invalid arguments for get_speech_status: "job_id" must be a job id as a tool returned it/);
  // "." and ".." were path segments: the batch poll route answered "ids is required".
  for (const dots of ['.', '..', 'job/../x']) {
    const dotted = await rich.mcp.callTool({ name: 'get_speech_status', arguments: { job_id: dots } });
    t.true(dotted.isError, dots);
    t.regex(text(dotted), /must be a job id as a tool returned it/);
  }
  await mcp.close();
  await rich.mcp.close();
});

test('rate limits are the routes\' own: the speech class counts MCP calls against the key', async (t) => {
  const { mcp } = await session();
  const calls = [];
  for (let i = 0; i < 5; i++) calls.push(await mcp.callTool({ name: 'text_to_speech', arguments: { text: `Câu số ${i}.` } }));
  t.deepEqual(calls.map((c) => Boolean(c.isError)), [false, false, false, false, true]);
  t.regex(text(calls[4]), /Too many requests right now: retry after \d+ seconds/);
  await mcp.close();
});

test('prompts and UI resources', async (t) => {
  const { mcp } = await session();
  const { prompts } = await mcp.listPrompts();
  t.deepEqual(prompts.map((pr) => pr.name), ['what_can_vieneu_do', 'read_text', 'find_voice', 'check_balance'], 'make_audiobook comes with the audiobook tools');
  const read = await mcp.getPrompt({ name: 'read_text', arguments: { text: 'Chào buổi sáng', voice: 'giọng nam miền Bắc' } });
  t.regex((read.messages[0].content as { text: string }).text, /list_voices[\s\S]*text_to_speech[\s\S]*Chào buổi sáng/);
  await t.throwsAsync(mcp.getPrompt({ name: 'find_voice', arguments: {} }), { message: /needs description/ });
  const { resources } = await mcp.listResources();
  t.deepEqual(resources.map((r) => [r.uri, r.mimeType]), [
    ['ui://vieneu/player.html', 'text/html;profile=mcp-app'], ['ui://vieneu/audiobook.html', 'text/html;profile=mcp-app'], ['ui://vieneu/capabilities.html', 'text/html;profile=mcp-app'],
  ]);
  const player = await mcp.readResource({ uri: 'ui://vieneu/player.html' });
  t.regex((player.contents[0] as { text: string }).text, /<audio[\s\S]*ui\/initialize/);
  t.deepEqual(player.contents[0]._meta, { ui: { csp: { resourceDomains: [p.url], connectDomains: [] }, prefersBorder: true } });
  const tts = (await mcp.listTools()).tools.find((tool) => tool.name === 'text_to_speech')!;
  t.deepEqual(tts._meta, { ui: { resourceUri: 'ui://vieneu/player.html' } });
  await mcp.close();
});

/** A raw 2026-07-28 request: version and capabilities in _meta, method and name in headers. */
async function modern(key: string, method: string, params: Record<string, unknown> = {}, headers: Record<string, string> = {}, version = '2026-07-28') {
  const name = (params.name ?? params.uri) as string | undefined;
  const res = await fetch(`${p.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream',
      'mcp-protocol-version': version, 'mcp-method': method, ...(name ? { 'mcp-name': name } : {}), ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': version, 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' } } } }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

test('protocol revision 2026-07-28: no handshake, server/discover, resultType and cache hints on every result', async (t) => {
  const { apiKey } = await p.bootstrap({ grant: { totalTokens: 100_000 } });
  const discover = await modern(apiKey, 'server/discover');
  t.is(discover.status, 200);
  t.deepEqual(discover.body.result.supportedVersions.slice(0, 2), ['2026-07-28', '2025-11-25']);
  t.is(discover.body.result.resultType, 'complete');
  t.is(discover.body.result._meta['io.modelcontextprotocol/serverInfo'].name, 'vieneu');
  t.truthy(discover.body.result.capabilities.extensions['io.modelcontextprotocol/ui']);
  const list = await modern(apiKey, 'tools/list');
  t.is(list.body.result.tools.length, 6);
  t.deepEqual([list.body.result.resultType, list.body.result.cacheScope, typeof list.body.result.ttlMs], ['complete', 'public', 'number']);
  const call = await modern(apiKey, 'tools/call', { name: 'list_voices', arguments: { search: 'Mai' } });
  t.is(call.body.result.resultType, 'complete');
  t.is(call.body.result.structuredContent.voices[0].id, 'vi-north-female-mai');
  const prompt = await modern(apiKey, 'prompts/get', { name: 'check_balance' }, { 'mcp-name': `=?base64?${Buffer.from('check_balance').toString('base64')}?=` });
  t.is(prompt.status, 200, 'an encoded Mcp-Name is decoded');
  const read = await modern(apiKey, 'resources/read', { uri: 'ui://vieneu/capabilities.html' });
  t.is(read.body.result.contents[0].mimeType, 'text/html;profile=mcp-app');
  const missing = await modern(apiKey, 'resources/read', { uri: 'ui://vieneu/nothing.html' });
  t.is(missing.body.error.code, -32602);
});

test('protocol revision 2026-07-28 refusals: header mismatch, unsupported version, unknown method, GET', async (t) => {
  const { apiKey } = await p.bootstrap({ grant: { totalTokens: 100_000 } });
  const mismatch = await modern(apiKey, 'tools/list', {}, { 'mcp-method': 'prompts/list' });
  t.deepEqual([mismatch.status, mismatch.body.error.code], [400, -32020]);
  const noName = await modern(apiKey, 'tools/call', { name: 'list_voices', arguments: {} }, { 'mcp-name': 'text_to_speech' });
  t.deepEqual([noName.status, noName.body.error.code], [400, -32020]);
  const unsupported = await modern(apiKey, 'tools/list', {}, {}, '2099-01-01');
  t.deepEqual([unsupported.status, unsupported.body.error.code], [400, -32022]);
  t.deepEqual(unsupported.body.error.data, { supported: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07'], requested: '2099-01-01' });
  const unknown = await modern(apiKey, 'sampling/createMessage');
  t.deepEqual([unknown.status, unknown.body.error.code], [404, -32601]);
  const get = await fetch(`${p.url}/mcp`, { headers: { authorization: `Bearer ${apiKey}`, accept: 'text/event-stream' } });
  t.is(get.status, 405);
  t.is(get.headers.get('allow'), 'POST');
});

test('params that do not fit their method are -32602 Invalid params naming the field, in both revisions (the SDK answered -32603 Internal error)', async (t) => {
  const { apiKey } = await p.bootstrap({ grant: { totalTokens: 100_000 } });
  const legacy = async (body: Record<string, unknown>) => {
    const res = await fetch(`${p.url}/mcp`, {
      method: 'POST', headers: { 'x-api-key': apiKey, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, ...body }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const notAnObject = await legacy({ method: 'tools/call', params: { name: 'list_voices', arguments: 'Mai' } });
  t.is(notAnObject.status, 200);
  t.is(notAnObject.body.id, 9);
  t.is(notAnObject.body.error.code, -32602);
  t.regex(notAnObject.body.error.message, /^Invalid params for tools\/call: params\.arguments: /);
  const noUri = await legacy({ method: 'resources/read', params: {} });
  t.is(noUri.body.error.code, -32602);
  t.regex(noUri.body.error.message, /params\.uri/);
  const inherited = await legacy({ method: 'toString', params: {} });
  t.is(inherited.body.error.code, -32601, 'a method named after an object property is simply unknown');
  const fine = await legacy({ method: 'tools/call', params: { name: 'list_voices', arguments: { search: 'Mai' } } });
  t.is(fine.body.result.structuredContent.voices[0].id, 'vi-north-female-mai');
  const modernMisfit = await modern(apiKey, 'tools/call', { name: 'list_voices', arguments: ['Mai'] });
  t.deepEqual([modernMisfit.status, modernMisfit.body.error.code], [200, -32602]);
  t.regex(modernMisfit.body.error.message, /params\.arguments must be an object/);
  // Prompt arguments are strings (the 2025 SDK's schema refused the rest; the 2026 path threw "trim is not a function", a 500).
  for (const args of [{ text: 123 }, null, { text: {} }, 'Xin chào']) {
    const misfit = await modern(apiKey, 'prompts/get', { name: 'read_text', arguments: args });
    t.deepEqual([misfit.status, misfit.body.error?.code], [200, -32602], JSON.stringify(args));
    t.regex(misfit.body.error.message, /object of strings/);
  }
  const fitting = await modern(apiKey, 'prompts/get', { name: 'read_text', arguments: { text: 'Xin chào' } });
  t.is(fitting.status, 200);
  t.truthy(fitting.body.result.messages[0].content.text);
});

test('2025-era clients: initialize negotiates their revision', async (t) => {
  const { apiKey } = await p.bootstrap({ grant: { totalTokens: 100_000 } });
  for (const version of ['2025-03-26', '2025-06-18', '2025-11-25']) {
    const res = await fetch(`${p.url}/mcp`, {
      method: 'POST', headers: { 'x-api-key': apiKey, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'old', version: '1' } } }),
    });
    const body = await res.json() as { result: { protocolVersion: string; serverInfo: { name: string } } };
    t.is(body.result.protocolVersion, version);
    t.is(body.result.serverInfo.name, 'vieneu');
  }
});

test('a browser origin other than the service\'s own is refused; one of MCP_ALLOWED_ORIGINS is served, its trailing slash ignored', async (t) => {
  const { apiKey } = await p.bootstrap({ grant: { totalTokens: 100_000 } });
  const from = (origin: string) => fetch(`${p.url}/mcp`, {
    method: 'POST', headers: { 'x-api-key': apiKey, origin, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
  t.is((await from('https://evil.example')).status, 403);
  const allowed = await from('https://app.example.com');
  t.is(allowed.status, 200);
  t.is(allowed.headers.get('access-control-allow-origin'), 'https://app.example.com');
});

test('every 401 from /mcp carries the Bearer challenge with resource_metadata, another scheme or a malformed header included (RFC 6750 3)', async (t) => {
  for (const authorization of ['Basic Zm9vOmJhcg==', 'DPoP abc', 'Bearer', 'Bearer short']) {
    const res = await fetch(`${p.url}/mcp`, {
      method: 'POST', headers: { authorization, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    t.is(res.status, 401, authorization);
    t.regex(res.headers.get('www-authenticate') ?? '', new RegExp(`^Bearer .*resource_metadata="${p.url}/\\.well-known/oauth-protected-resource"`), authorization);
  }
});

test('2026-07-28: a JSON-RPC id that is not a string, a number or null is -32600 Invalid Request, answered with a null id', async (t) => {
  const { apiKey } = await p.bootstrap({ grant: { totalTokens: 100_000 } });
  const version = '2026-07-28';
  for (const id of [{ a: 1 }, [1], true]) {
    const res = await fetch(`${p.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': version, 'mcp-method': 'tools/list' },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': version, 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' } } } }),
    });
    const body = await res.json() as { id: unknown; error?: { code: number } };
    t.is(res.status, 400, JSON.stringify(id));
    t.is(body.error?.code, -32600);
    t.is(body.id, null);
  }
});

/** A raw 2025-era POST to /mcp (no initialize: the server is stateless). */
async function legacyPost(key: string, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${p.url}/mcp`, {
    method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body,
  });
  const raw = await res.text();
  return { status: res.status, body: (raw ? JSON.parse(raw) : null) as any };
}

test('2025-era protocol errors carry the clean message: the SDK\'s client adds "MCP error -32602: " once, as on the 2026-07-28 path', async (t) => {
  const { apiKey, mcp } = await session();
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['tools/call', { name: 'nope', arguments: {} }, 'Unknown tool "nope". Call tools/list for the tools of this server.'],
    ['prompts/get', { name: 'nope' }, 'Unknown prompt "nope".'],
    ['prompts/get', { name: 'read_text', arguments: {} }, 'Prompt "read_text" needs text.'],
    ['resources/read', { uri: 'ui://vieneu/nope.html' }, 'Unknown resource "ui://vieneu/nope.html".'],
  ];
  for (const [method, params, message] of cases) {
    const res = await legacyPost(apiKey, JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }), { 'mcp-protocol-version': '2025-06-18' });
    t.deepEqual([res.status, res.body.error.code, res.body.error.message], [200, -32602, message], method);
    t.deepEqual((await modern(apiKey, method, params)).body.error.message, message, `${method}, 2026-07-28`);
  }
  const err = await t.throwsAsync(mcp.getPrompt({ name: 'find_voice', arguments: {} }));
  t.is(err?.message, 'MCP error -32602: Prompt "find_voice" needs description.');
  await mcp.close();
});

test('tool refusals name the tool\'s own arguments and tools: "text", not "input"; list_voices, not a REST route', async (t) => {
  const { mcp } = await session();
  const blank = await mcp.callTool({ name: 'text_to_speech', arguments: { text: '   ' } });
  t.true(blank.isError);
  t.is(text(blank), '"text" contains nothing that can be spoken. Fix the arguments and try again.');
  for (const input of ['Xin chào.', 'Xin chào các bạn. '.repeat(90)]) {
    const voice = await mcp.callTool({ name: 'text_to_speech', arguments: { text: input, voice: 'nope-voice' } });
    t.true(voice.isError);
    t.is(text(voice), 'Unknown voice "nope-voice". Call list_voices to pick a valid voice id.', `${[...input].length} characters`);
  }
  await mcp.close();
});

test('structuredContent.error.code is the refusal\'s code on the MP3 route as on the job route (the compatible envelope has none)', async (t) => {
  const short = 'Xin chào các bạn. '.repeat(20);
  const long = 'Hôm nay trời đẹp. '.repeat(100);
  t.true([...short].length <= 1500 && [...long].length > 1500);
  const codes = async (grant: Record<string, unknown>) => {
    const { mcp } = await session(grant);
    const errors = [];
    for (const input of [short, long]) {
      const result = await mcp.callTool({ name: 'text_to_speech', arguments: { text: input } });
      t.true(result.isError, text(result));
      errors.push((result.structuredContent as { error: Record<string, unknown> }).error);
    }
    await mcp.close();
    return errors;
  };
  const [mp3, job] = await codes({ totalTokens: 1000 });
  t.like(mp3, { status: 403, code: 'GRANT_TOKENS_EXHAUSTED', remaining: 1000, required: 1404 });
  t.like(job, { status: 403, code: 'GRANT_TOKENS_EXHAUSTED', remaining: 1000 });
  const [mp3Daily, jobDaily] = await codes({ dailyCap: 1000 });
  t.like(mp3Daily, { status: 429, code: 'GRANT_DAILY_LIMIT', resetAt: jobDaily.resetAt });
  t.like(jobDaily, { status: 429, code: 'GRANT_DAILY_LIMIT' });
  t.truthy(jobDaily.resetAt);
  // A plan spent to its last token: GRANT_INACTIVE on both routes, without advice that cannot help (a cap, a shorter text).
  const { mcp: spent } = await session({ totalTokens: 195 });
  t.falsy((await spent.callTool({ name: 'text_to_speech', arguments: { text: 'Một câu ngắn.' } })).isError);
  for (const input of [short, long]) {
    const result = await spent.callTool({ name: 'text_to_speech', arguments: { text: input } });
    t.like((result.structuredContent as { error: Record<string, unknown> }).error, { status: 403, code: 'GRANT_INACTIVE' });
    t.notRegex(text(result), /wait for a cap|shorter text/);
  }
  await spent.close();
  // A test key's word cap (README: 400 TEST_KEY_WORD_LIMIT), and no "fix the arguments" for what no argument fixes.
  const { apiKey } = await p.bootstrap({ kind: 'test', grant: { totalTokens: 1_000_000 } });
  const tester = await connect(apiKey);
  for (const input of ['một '.repeat(101), 'một '.repeat(400)]) {
    const result = await tester.callTool({ name: 'text_to_speech', arguments: { text: input } });
    t.like((result.structuredContent as { error: unknown }).error, { status: 400, code: 'TEST_KEY_WORD_LIMIT' }, `${input.length} characters`);
    t.regex(text(result), /A test key reads at most 100 words per request/);
    t.notRegex(text(result), /Fix the arguments/);
  }
  const few = await tester.callTool({ name: 'text_to_speech', arguments: { text: 'Xin chào.', voice: 'nope-voice' } });
  t.like((few.structuredContent as { error: unknown }).error, { status: 400, code: null }, 'another refusal of a test key keeps its own');
  await tester.close();
});

test('input schemas state the id limits the tools enforce, and an argument of the wrong JSON type is refused, not converted', async (t) => {
  const { apiKey, mcp } = await session();
  const { tools } = await mcp.listTools();
  const jobId = (tools.find((tool) => tool.name === 'get_speech_status')!.inputSchema.properties as Record<string, unknown>).job_id;
  t.like(jobId, { type: 'string', minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_-]+$' });
  const before = await remaining(apiKey);
  const limit = await mcp.callTool({ name: 'list_voices', arguments: { limit: '5' } });
  t.true(limit.isError);
  t.regex(text(limit), /^Invalid arguments for list_voices: "limit" must be a number\./);
  const speed = await mcp.callTool({ name: 'text_to_speech', arguments: { text: 'Xin chào.', speed: '1.5' } });
  t.true(speed.isError);
  t.regex(text(speed), /"speed" must be a number/);
  t.is(await remaining(apiKey), before, 'nothing was made or billed');
  const fine = await mcp.callTool({ name: 'list_voices', arguments: { limit: 2 } });
  t.is((fine.structuredContent as { count: number }).count, 2);
  await mcp.close();
});

test('a body over 1 MB is 413 with a JSON-RPC error naming the limit, not a parse error', async (t) => {
  const { apiKey } = await p.bootstrap({ grant: { totalTokens: 100_000 } });
  const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_voices', arguments: { search: 'a '.repeat(600_000) } } });
  const res = await legacyPost(apiKey, big);
  t.is(res.status, 413);
  t.is(res.body.error.code, -32000);
  t.regex(res.body.error.message, /must not exceed 1048576 bytes \(1 MB\)/);
  const broken = await legacyPost(apiKey, '{"jsonrpc": "2.0", ');
  t.deepEqual([broken.status, broken.body.error.code], [400, -32700], 'a body that is not JSON is still a parse error');
});

test('JSON-RPC envelope on the 2025 path: -32600 for an empty batch, JSON that is no request, and a batch after revision 2025-03-26', async (t) => {
  const { apiKey } = await p.bootstrap({ grant: { totalTokens: 100_000 } });
  const list = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
  for (const body of ['[]', '{"foo":1}', '{"jsonrpc":"1.0","id":1,"method":"tools/list"}', '{"jsonrpc":"2.0","id":null,"method":"tools/list"}', '5', 'null', '[1]']) {
    const res = await legacyPost(apiKey, body);
    t.deepEqual([res.status, res.body?.error?.code], [400, -32600], body);
  }
  for (const version of ['2025-06-18', '2025-11-25']) {
    const res = await legacyPost(apiKey, JSON.stringify([list]), { 'mcp-protocol-version': version });
    t.deepEqual([res.status, res.body.error.code], [400, -32600], version);
    t.regex(res.body.error.message, /batches are for protocol revision 2025-03-26 only/);
  }
  const batch = await legacyPost(apiKey, JSON.stringify([list, { ...list, id: 2, method: 'prompts/list' }]), { 'mcp-protocol-version': '2025-03-26' });
  t.is(batch.status, 200);
  t.deepEqual(batch.body.map((answer: { id: number }) => answer.id), [1, 2], 'a 2025-03-26 client still batches');
});
