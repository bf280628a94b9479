import test from 'ava';
import { request } from 'node:http';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

let p: TestPlatform;
test.before(async () => {
  p = await startTestPlatform({ ACCOUNT_ROUTES_PER_MINUTE: '1000' });
});
test.after.always(async () => {
  await p?.stop();
});

test('every response carries a service-generated X-Request-Id; a client-sent one is overwritten', async (t) => {
  const res = await p.api('/engines', { headers: { 'x-request-id': 'client-chosen' } });
  const id = res.headers.get('x-request-id');
  t.truthy(id);
  t.not(id, 'client-chosen');
  t.regex(id!, /^[0-9a-f-]{36}$/);
});

test('native error bodies carry statusCode and traceId equal to X-Request-Id', async (t) => {
  const res = await p.api('/balance');
  t.is(res.status, 401);
  const body = await res.json();
  t.is(body.statusCode, 401);
  t.is(body.traceId, res.headers.get('x-request-id'));
  t.is(typeof body.message, 'string');
});

test('unknown routes get a 404 in the native envelope, never HTML', async (t) => {
  const res = await p.api('/does-not-exist');
  t.is(res.status, 404);
  t.regex(res.headers.get('content-type') ?? '', /json/);
  const body = await res.json();
  t.is(body.statusCode, 404);
  t.is(body.code, 'ROUTE_NOT_FOUND');
});

test('the API base the start-up banner prints (/api/v1) is 404 saying it is the base and where the routes and reference are, not "every route lives under /api/v1"', async (t) => {
  for (const path of ['/api/v1', '/api/v1/']) {
    const res = await fetch(`${p.url}${path}`);
    t.is(res.status, 404);
    const body = await res.json();
    t.is(body.code, 'ROUTE_NOT_FOUND');
    t.regex(body.message, /\/api\/v1 is the base of the API, not a route: .*\/docs/, path);
  }
});

test('a wrong method on a known route is 405 in the native envelope, with Allow naming the methods it takes', async (t) => {
  const res = await p.api('/engines', { method: 'DELETE' });
  t.is(res.status, 405);
  t.is(res.headers.get('allow'), 'HEAD, GET');
  const body = await res.json();
  t.like(body, { statusCode: 405, code: 'METHOD_NOT_ALLOWED' });
  const tts = await p.api('/tts', { method: 'PUT' });
  t.is(tts.status, 405);
  t.is(tts.headers.get('allow'), 'POST, HEAD, GET');
});

test('a wrong method on the compatible POST /audio/speech is 405 in its own envelope (error object, a client error: invalid_request_error, not api_error), with Allow, whatever the spelling of the path', async (t) => {
  const { apiKey } = await p.bootstrap();
  for (const [method, path] of [['GET', '/audio/speech'], ['PUT', '/audio/speech'], ['DELETE', '/AUDIO/SPEECH'], ['GET', '/audio/speech/']]) {
    const res = await p.api(path, { method, key: apiKey });
    t.is(res.status, 405, `${method} ${path}`);
    t.is(res.headers.get('allow'), 'POST');
    const body = await res.json();
    t.deepEqual(Object.keys(body), ['error']);
    t.is(body.error.type, 'invalid_request_error', `${method} ${path}`);
  }
});

test('a route answers the same whether it is reached directly or through its router: exact path, trailing slash, other case, HEAD, a path under it', async (t) => {
  const { apiKey } = await p.bootstrap();
  const exact = await p.api('/balance', { key: apiKey });
  t.is(exact.status, 200);
  const body = await exact.json();
  for (const variant of ['/balance/', '/Balance']) {
    const res = await p.api(variant, { key: apiKey });
    t.is(res.status, 200, variant);
    t.deepEqual(await res.json(), body, variant);
  }
  const head = await p.api('/balance', { method: 'HEAD', key: apiKey });
  t.is(head.status, 200);
  const under = await p.api('/balance/more', { key: apiKey });
  t.is(under.status, 404);
  t.is((await under.json()).code, 'ROUTE_NOT_FOUND');
  const job = await p.api('/tts/job_unknown', { key: apiKey });
  t.is(job.status, 404, 'a route with a parameter is still found by its router');
  t.not((await job.json()).code, 'ROUTE_NOT_FOUND');
});

test('malformed JSON is a 400 with a clear message', async (t) => {
  const { apiKey } = await p.bootstrap();
  const res = await p.api('/clone', { method: 'POST', key: apiKey, headers: { 'content-type': 'application/json' }, body: '{"broken":' });
  // closed routes do not read bodies: they answer 410 whatever is sent
  t.is(res.status, 410);
  const admin = await p.admin('/accounts', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":' });
  t.is(admin.status, 400);
  t.is((await admin.json()).statusCode, 400);
});

test('GET /engines needs no key and lists v4 with its multiplier and the global multiplier', async (t) => {
  const res = await p.api('/engines');
  t.is(res.status, 200);
  const body = await res.json();
  t.is(body.globalMultiplier, 1.3);
  t.is(body.engines.length, 1);
  t.like(body.engines[0], { key: 'v4', isDefault: true, sampleRate: 48000, billingMultiplier: 3 });
  t.true(body.engines[0].features.includes('stream'));
});

test('GET /emotion-tags defaults to v4: no styles, three cue tags', async (t) => {
  const body = await (await p.api('/emotion-tags')).json();
  t.is(body.engine, 'v4');
  t.deepEqual(body.styles, []);
  t.deepEqual(body.cueTags, ['[cười]', '[thở dài]', '[hắng giọng]']);
});

for (const path of ['/voices?engine=v3', '/emotion-tags?engine=v3', '/audio/voices?engine=v3']) {
  test(`engine v3 named in ${path} is 400 with the retirement message`, async (t) => {
    const { apiKey } = await p.bootstrap();
    const res = await p.api(path, { key: apiKey });
    t.is(res.status, 400);
    const body = await res.json();
    t.regex(JSON.stringify(body.message), /retired on 2026-09-24/);
    t.regex(JSON.stringify(body.message), /GET \/voices\?engine=v4/);
  });
}

test('GET /voices without a key lists the catalogue: north, central, south, female and male, all v4', async (t) => {
  const body = await (await p.api('/voices')).json();
  t.is(body.count, body.voices.length);
  t.true(body.count >= 6);
  const regions = new Set(body.voices.map((v: any) => v.region));
  const genders = new Set(body.voices.map((v: any) => v.gender));
  t.deepEqual([...regions].sort(), ['central', 'north', 'south']);
  t.deepEqual([...genders].sort(), ['female', 'male']);
  t.true(body.voices.every((v: any) => v.engine === 'v4' && v.kind === 'catalog'));
});

test("GET /voices with a key adds the account's own clones, not other accounts'", async (t) => {
  const mine = await p.bootstrap();
  const other = await p.bootstrap();
  const clone = await (await p.admin(`/accounts/${mine.accountId}/clones`, { method: 'POST', json: { name: 'Giọng của tôi', baseVoiceId: 'vi-north-male-minh' } })).json();
  await p.admin(`/accounts/${other.accountId}/clones`, { method: 'POST', json: { name: 'Khác', baseVoiceId: 'vi-north-male-minh' } });
  const body = await (await p.api('/voices', { key: mine.apiKey })).json();
  const clones = body.voices.filter((v: any) => v.kind === 'cloned');
  t.is(clones.length, 1);
  t.is(clones[0].id, clone.id);
  t.regex(clone.id, /^clone_/);
});

test('GET /audio/voices requires a key and lists voice ids', async (t) => {
  t.is((await p.api('/audio/voices')).status, 401);
  const { apiKey } = await p.bootstrap();
  const body = await (await p.api('/audio/voices', { key: apiKey })).json();
  t.true(body.voices.includes('vi-north-female-mai'));
  t.is((await p.api('/audio/voices?engine=v9', { key: apiKey })).status, 400);
});

test('both auth headers work: Authorization: Bearer and X-API-Key', async (t) => {
  const { apiKey } = await p.bootstrap();
  t.is((await p.api('/balance', { key: apiKey })).status, 200);
  t.is((await p.api('/balance', { headers: { 'x-api-key': apiKey } })).status, 200);
});

test('sending both auth headers is 400', async (t) => {
  const { apiKey } = await p.bootstrap();
  const res = await p.api('/balance', { headers: { authorization: `Bearer ${apiKey}`, 'x-api-key': apiKey } });
  t.is(res.status, 400);
  t.is((await res.json()).statusCode, 400);
});

/** A GET whose headers may repeat, as [name, value, name, value, …] (fetch folds repeats into one line; node:http sends each pair as its own line). */
function rawGet(url: string, headers: string[]): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    // Given as an array, the headers are sent as they are: Node adds no Host.
    request(url, { headers: ['host', new URL(url).host, ...headers] }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => { text += chunk; });
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    }).on('error', reject).end();
  });
}

test('one auth header sent twice is 400 AMBIGUOUS_CREDENTIALS, whichever keys it names: the first is not silently used', async (t) => {
  const a = await p.bootstrap();
  const b = await p.bootstrap();
  for (const headers of [
    ['authorization', `Bearer ${a.apiKey}`, 'authorization', `Bearer ${b.apiKey}`],
    ['authorization', `Bearer ${a.apiKey}`, 'authorization', 'Bearer garbage'],
    ['x-api-key', a.apiKey, 'x-api-key', a.apiKey],
  ]) {
    const res = await rawGet(`${p.url}/api/v1/balance`, headers);
    t.is(res.status, 400, JSON.stringify(headers));
    t.like(res.body, { statusCode: 400, code: 'AMBIGUOUS_CREDENTIALS' });
  }
  const mcp = await new Promise<number>((resolve, reject) => {
    request(`${p.url}/mcp`, {
      method: 'POST',
      headers: ['host', new URL(p.url).host, 'authorization', `Bearer ${a.apiKey}`, 'authorization', `Bearer ${b.apiKey}`, 'content-type', 'application/json', 'accept', 'application/json, text/event-stream'],
    }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    }).on('error', reject).end('{"jsonrpc":"2.0","id":1,"method":"tools/list"}');
  });
  t.is(mcp, 400, 'MCP refuses it too');
  t.is((await rawGet(`${p.url}/api/v1/balance`, ['authorization', `Bearer ${a.apiKey}`])).status, 200);
});

test('missing, malformed, unknown and revoked keys are 401', async (t) => {
  const { apiKey, keyId } = await p.bootstrap();
  t.is((await p.api('/balance')).status, 401);
  t.is((await p.api('/balance', { key: 'not-a-key' })).status, 401);
  t.is((await p.api('/balance', { key: 'vn_sk_' + 'A'.repeat(32) })).status, 401);
  t.is((await p.api('/balance', { headers: { authorization: 'Basic abc' } })).status, 401);
  t.is((await p.admin(`/keys/${keyId}`, { method: 'DELETE' })).status, 200);
  t.is((await p.api('/balance', { key: apiKey })).status, 401);
});

test('GET /balance: remaining, spendableTokens, totalRemainingTokens and plan with caps and isGift', async (t) => {
  const { apiKey } = await p.bootstrap({ grant: { totalTokens: 5000, dailyCap: 1000, weeklyCap: 3000, expiresInDays: 30 } });
  const body = await (await p.api('/balance', { key: apiKey })).json();
  t.is(body.remaining, 1000);
  t.is(body.spendableTokens, 1000);
  t.is(body.totalRemainingTokens, 5000);
  t.is(body.plan.isGift, false);
  t.is(body.plan.daily.limit, 1000);
  t.is(body.plan.daily.remaining, 1000);
  t.truthy(body.plan.daily.resetAt);
  t.is(body.plan.weekly.limit, 3000);
  t.truthy(body.plan.expiresAt);
});

test('GET /balance with two grants: remaining is the best single grant, spendable the sum', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 400 } });
  await p.admin(`/accounts/${acct.accountId}/grants`, { method: 'POST', json: { totalTokens: 700, isGift: true } });
  const body = await (await p.api('/balance', { key: acct.apiKey })).json();
  t.is(body.remaining, 700);
  t.is(body.spendableTokens, 1100);
  t.is(body.totalRemainingTokens, 1100);
  t.true(body.plan.isGift);
  t.is(body.plan.daily, null);
  t.is(body.plan.expiresAt, null);
});

for (const [path, method] of [['/voices', 'POST'], ['/voices/clone_x', 'DELETE'], ['/clone', 'POST'], ['/upload', 'POST'], ['/prepare', 'POST']] as const) {
  test(`closed cloning route ${method} ${path} answers 410 CLONE_WEB_ONLY with cloneUrl`, async (t) => {
    const { apiKey } = await p.bootstrap();
    const res = await p.api(path, { method, key: apiKey });
    t.is(res.status, 410);
    const body = await res.json();
    t.is(body.code, 'CLONE_WEB_ONLY');
    t.regex(body.cloneUrl, /^https:\/\//);
  });
}

test('at most 5 active keys per account; revoking one frees a slot', async (t) => {
  const acct = await p.bootstrap();
  for (let i = 0; i < 4; i++) t.is((await p.admin(`/accounts/${acct.accountId}/keys`, { method: 'POST', json: {} })).status, 201);
  const sixth = await p.admin(`/accounts/${acct.accountId}/keys`, { method: 'POST', json: {} });
  t.is(sixth.status, 400);
  t.is((await sixth.json()).code, 'KEY_LIMIT_REACHED');
  await p.admin(`/keys/${acct.keyId}`, { method: 'DELETE' });
  t.is((await p.admin(`/accounts/${acct.accountId}/keys`, { method: 'POST', json: {} })).status, 201);
});

test('a key is issued only against an active grant: 403 saying no active grant was found', async (t) => {
  const account = await (await p.admin('/accounts', { method: 'POST', json: { name: 'No grant yet' } })).json();
  const res = await p.admin(`/accounts/${account.id}/keys`, { method: 'POST', json: {} });
  t.is(res.status, 403);
  t.regex((await res.json()).message, /no active grant was found/i);
});

test('the free 7-day trial can be started once per account', async (t) => {
  const account = await (await p.admin('/accounts', { method: 'POST', json: { name: 'Trial' } })).json();
  const first = await p.admin(`/accounts/${account.id}/trial`, { method: 'POST' });
  t.is(first.status, 201);
  const grant = await first.json();
  const days = (Date.parse(grant.expiresAt) - Date.now()) / 86_400_000;
  t.true(days > 6.9 && days <= 7);
  const second = await p.admin(`/accounts/${account.id}/trial`, { method: 'POST' });
  t.is(second.status, 409);
  t.is((await second.json()).code, 'TRIAL_ALREADY_USED');
  t.is((await p.admin(`/accounts/${account.id}/keys`, { method: 'POST', json: { kind: 'test' } })).status, 201);
});

test('test keys start vn_test_, live keys vn_sk_; plaintext is shown once', async (t) => {
  const live = await p.bootstrap();
  const testKey = await p.bootstrap({ kind: 'test' });
  t.regex(live.apiKey, /^vn_sk_/);
  t.regex(testKey.apiKey, /^vn_test_/);
  const listed = await (await p.admin(`/accounts/${live.accountId}/keys`)).json();
  t.false(JSON.stringify(listed).includes(live.apiKey));
});

test('the admin API refuses a wrong token', async (t) => {
  const res = await fetch(`${p.url}/admin/v1/accounts`, { method: 'POST', headers: { authorization: 'Bearer nope' } });
  t.is(res.status, 401);
});

test('/readyz stays ready (200, "degraded") while Redis cannot be reached: the API keeps serving, each process counting for itself', async (t) => {
  const down = await startTestPlatform({ REDIS_URL: 'redis://127.0.0.1:1' });
  t.teardown(() => down.stop());
  const res = await fetch(`${down.platform.opsUrl}/readyz`);
  const body = await res.json();
  t.is(res.status, 200, JSON.stringify(body));
  t.is(body.status, 'degraded');
  t.regex(body.checks.counters, /^degraded, unreachable: /);
  const { apiKey } = await down.bootstrap();
  t.is((await down.api('/balance', { key: apiKey })).status, 200);
});

test('/healthz and /readyz are served outside /api/v1 on both listeners; /metrics on the ops listener', async (t) => {
  for (const base of [p.url, p.platform.opsUrl]) {
    t.is((await fetch(`${base}/healthz`)).status, 200);
    const ready = await fetch(`${base}/readyz`);
    t.is(ready.status, 200);
    t.like(await ready.json(), { status: 'ready' });
  }
  const metrics = await (await fetch(`${p.platform.opsUrl}/metrics`)).text();
  t.regex(metrics, /http_request_duration_seconds/);
  t.regex(metrics, /tokens_charged_total/);
  t.regex(metrics, /process_cpu_seconds_total/);
});

test('/metrics counts bus traffic per topic and reports consumer lag per group', async (t) => {
  const { apiKey } = await p.bootstrap();
  await p.api('/clone', { method: 'POST', key: apiKey });
  await new Promise((r) => setTimeout(r, 300));
  const metrics = await (await fetch(`${p.platform.opsUrl}/metrics`)).text();
  t.regex(metrics, /bus_published_total\{topic="request\.outcomes"\} [1-9]/);
  t.regex(metrics, /bus_consumer_lag\{topic="request\.outcomes",group="usage-aggregator"\} \d+/);
  t.regex(metrics, /http_request_duration_seconds_count\{route="clone",method="POST",status="410"\} [1-9]/);
});

test('a body that is JSON but not an object (null, a string, a number, an array) is 400 INVALID_JSON saying it must be an object, not that it is not JSON', async (t) => {
  const { apiKey } = await p.bootstrap();
  for (const body of ['null', '"abc"', '5', '[]', '[{"text":"Xin chào các bạn."}]']) {
    const res = await p.api('/tts', { method: 'POST', key: apiKey, headers: { 'content-type': 'application/json' }, body });
    t.is(res.status, 400);
    t.like(await res.json(), { code: 'INVALID_JSON', message: 'The request body must be a JSON object.' }, body);
  }
});

test('a "__proto__" key is refused as a field that is not allowed (VALIDATION_FAILED, like "constructor"), not as invalid JSON', async (t) => {
  const { apiKey } = await p.bootstrap();
  for (const body of ['{"text":"Xin chào các bạn.","__proto__":{"x":1}}', '{"text":"Xin chào các bạn.","\\u005f_proto__":{"x":1}}']) {
    const res = await p.api('/tts', { method: 'POST', key: apiKey, headers: { 'content-type': 'application/json' }, body });
    t.is(res.status, 400, body);
    t.like(await res.json(), { code: 'VALIDATION_FAILED', message: ['"__proto__" is not allowed'] }, body);
  }
});

test('POST with malformed JSON is 400 INVALID_JSON in the native envelope', async (t) => {
  const { apiKey } = await p.bootstrap();
  const res = await p.api('/tts', { method: 'POST', key: apiKey, headers: { 'content-type': 'application/json' }, body: '{"text": "chào' });
  t.is(res.status, 400);
  const body = await res.json();
  t.is(body.code, 'INVALID_JSON');
  t.is(body.statusCode, 400);
});

test('POST with a non-JSON content type is 415 in the native envelope', async (t) => {
  const { apiKey } = await p.bootstrap();
  const res = await p.api('/tts', { method: 'POST', key: apiKey, headers: { 'content-type': 'text/plain' }, body: 'xin chào' });
  t.is(res.status, 415);
  t.is((await res.json()).code, 'UNSUPPORTED_MEDIA_TYPE');
});

test('a JSON body declared in a charset other than UTF-8 is 415 in each route\'s envelope, nothing queued; UTF-8 however spelled is read', async (t) => {
  const { apiKey } = await p.bootstrap();
  // "Xin chào" in windows-1258: read as UTF-8 it would become replacement characters, spoken and paid for.
  const legacy = Buffer.concat([Buffer.from('{"text":"Xin ch'), Buffer.from([0xe0]), Buffer.from('o"}')]);
  const native = await p.api('/tts', { method: 'POST', key: apiKey, headers: { 'content-type': 'application/json; charset=windows-1258' }, body: legacy });
  t.is(native.status, 415);
  const refusal = await native.json();
  t.like(refusal, { statusCode: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
  t.regex(refusal.message, /UTF-8.*windows-1258/);
  const compat = await p.api('/audio/speech', { method: 'POST', key: apiKey, headers: { 'content-type': 'application/json; charset=ISO-8859-1' }, body: '{"input":"Xin chao","voice":"Mai"}' });
  t.is(compat.status, 415);
  t.like((await compat.json()).error, { type: 'invalid_request_error' });
  const admin = await p.admin('/accounts', { method: 'POST', headers: { 'content-type': 'application/json; charset=latin1' }, body: '{"name":"Acme"}' });
  t.is(admin.status, 415);
  t.like(await admin.json(), { statusCode: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
  for (const charset of ['utf-8', 'UTF-8', '"utf-8"', 'utf8']) {
    const res = await p.api('/tts', { method: 'POST', key: apiKey, headers: { 'content-type': `application/json; charset=${charset}` }, body: JSON.stringify({ text: `Xin chào, ${charset}` }) });
    t.is(res.status, 201, charset);
  }
});

test('an oversized body is 413 PAYLOAD_TOO_LARGE in the native envelope, never a 500', async (t) => {
  const { apiKey } = await p.bootstrap();
  const res = await p.api('/tts', { method: 'POST', key: apiKey, json: { text: 'a'.repeat(1_100_000) } });
  t.is(res.status, 413);
  t.like(await res.json(), { statusCode: 413, code: 'PAYLOAD_TOO_LARGE' });
});

test('the admin API refuses a body that is not JSON with 415 instead of reading it as empty', async (t) => {
  const res = await p.admin('/accounts', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{"name":"Acme"}' });
  t.is(res.status, 415);
  t.like(await res.json(), { statusCode: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
});

test('a body that is not what its Content-Encoding says (gzip, deflate, br) is 400 INVALID_CONTENT_ENCODING in each route\'s envelope, never a 500', async (t) => {
  const { apiKey } = await p.bootstrap();
  const json = (encoding: string) => ({ 'content-type': 'application/json', 'content-encoding': encoding });
  for (const encoding of ['gzip', 'deflate', 'br']) {
    const native = await p.api('/tts', { method: 'POST', key: apiKey, headers: json(encoding), body: '{"text":"Xin chào"}' });
    t.is(native.status, 400, encoding);
    t.like(await native.json(), { statusCode: 400, code: 'INVALID_CONTENT_ENCODING' });
  }
  const compat = await p.api('/audio/speech', { method: 'POST', key: apiKey, headers: json('gzip'), body: '{"input":"Xin chào","voice":"Mai"}' });
  t.is(compat.status, 400);
  t.like((await compat.json()).error, { type: 'invalid_request_error', code: null });
  const admin = await p.admin('/accounts', { method: 'POST', headers: json('gzip'), body: '{"name":"Acme"}' });
  t.is(admin.status, 400);
  t.like(await admin.json(), { statusCode: 400, code: 'INVALID_CONTENT_ENCODING' });
  const signIn = await fetch(`${p.url}/oauth/sign-in`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-encoding': 'gzip' }, body: 'email=a%40b.c&password=x',
  });
  t.is(signIn.status, 400);
});

test('admin grants: expiresAt must name a real calendar day (2026-02-30 is 400, not 2 March), and is kept as the UTC instant it names', async (t) => {
  const acct = await p.bootstrap();
  const grant = (expiresAt: string) => p.admin(`/accounts/${acct.accountId}/grants`, { method: 'POST', json: { totalTokens: 1000, expiresAt } });
  const impossible = await grant('2026-02-30T00:00:00Z');
  t.is(impossible.status, 400);
  t.is((await impossible.json()).code, 'VALIDATION_FAILED');
  const offset = await grant('2027-04-30T10:00:00+07:00');
  t.is(offset.status, 201);
  t.is((await offset.json()).expiresAt, '2027-04-30T03:00:00.000Z');
});
