import test from 'ava';
import { validate } from '@readme/openapi-parser';
import type { OpenAPIV3_1 } from 'openapi-types';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import * as ajvFormats from 'ajv-formats';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { responseChecker } from '../helpers/openapi-check.ts';

/**
 * SPEC Versioning 1: "the interface description version is 1.0". The
 * reference is an OpenAPI 3.1 document built from the route definitions,
 * served without a key, valid by a well-kept validator, and every response
 * the integration tests receive is checked against it
 * (test/helpers/checked-fetch.ts).
 */

type Doc = Omit<OpenAPIV3_1.Document, 'paths'> & { paths: Record<string, Record<string, any>> };

let p: TestPlatform;
let doc: Doc;
test.before(async () => {
  p = await startTestPlatform();
  const res = await fetch(`${p.url}/api/v1/openapi.json`);
  doc = (await res.json()) as Doc;
});
test.after.always(async () => {
  await p?.stop();
});

const operations = () => Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method: method.toUpperCase(), op })));

test('GET /api/v1/openapi.json needs no key and is a valid OpenAPI 3.1 document whose info.version is 1.0', async (t) => {
  const res = await fetch(`${p.url}/api/v1/openapi.json`);
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /^application\/json/);
  t.is(doc.openapi, '3.1.0');
  t.is(doc.info.version, '1.0');
  const result = await validate(structuredClone(doc) as never);
  t.true(result.valid, JSON.stringify(result, null, 1).slice(0, 2000));
  t.deepEqual(result.warnings, []);
});

test('every public route is in the reference with a documented success, and what is not public (admin) is not', (t) => {
  const paths = Object.keys(doc.paths);
  for (const expected of [
    'GET /api/v1/engines', 'GET /api/v1/voices', 'GET /api/v1/emotion-tags', 'GET /api/v1/audio/voices', 'GET /api/v1/balance', 'GET /api/v1/usage',
    'POST /api/v1/audio/speech', 'POST /api/v1/tts', 'GET /api/v1/tts', 'GET /api/v1/tts/{jobId}', 'POST /api/v1/tts/stream', 'POST /api/v1/agent/speech',
    'POST /api/v1/dialogue', 'POST /api/v1/dub', 'POST /api/v1/srt', 'POST /api/v1/voices', 'DELETE /api/v1/voices/{voiceId}', 'POST /api/v1/clone',
    'POST /api/v1/webhooks', 'GET /api/v1/webhooks', 'GET /api/v1/webhooks/{endpointId}', 'DELETE /api/v1/webhooks/{endpointId}',
    'GET /api/v1/webhooks/{endpointId}/deliveries', 'POST /api/v1/webhooks/{endpointId}/rotate-secret', 'POST /api/v1/webhooks/{endpointId}/disable',
    'POST /api/v1/webhooks/{endpointId}/enable', 'POST /api/v1/webhooks/{endpointId}/test', 'GET /api/v1/openapi.json',
    'POST /api/v1/audiobooks', 'GET /api/v1/audiobooks', 'GET /api/v1/audiobooks/{bookId}', 'POST /api/v1/audiobooks/{bookId}/chapters',
    'POST /api/v1/audiobooks/{bookId}/start', 'POST /api/v1/audiobooks/{bookId}/cancel', 'GET /api/v1/library', 'GET /api/v1/library/notifications',
    'GET /.well-known/oauth-protected-resource', 'GET /.well-known/oauth-authorization-server', 'POST /oauth/register', 'GET /oauth/authorize', 'POST /oauth/token', 'POST /oauth/revoke',
  ]) {
    const [method, path] = expected.split(' ');
    t.truthy(doc.paths[path!]?.[method!.toLowerCase()], `${expected} is documented`);
  }
  t.false(paths.some((path) => path.startsWith('/admin')), 'the admin API is not public');
  // The closed cloning routes answer only 410.
  const withoutSuccess = operations().filter(({ op }) => !Object.keys(op.responses).some((s) => /^[23]|^410$/.test(s))).map(({ method, path }) => `${method} ${path}`);
  t.deepEqual(withoutSuccess, [], 'operations that document no success (add responses[2xx] to their route definitions)');
  for (const { method, path, op } of operations()) {
    if (!path.startsWith('/api/v1/')) continue;
    for (const status of ['429', '503']) t.truthy(op.responses[status]?.content?.['text/html'], `${method} ${path}: the edge's ${status} page is documented`);
  }
});

test('both error envelopes are components: the compatible one on POST /audio/speech only, the native one elsewhere', (t) => {
  const schemas = doc.components!.schemas!;
  t.deepEqual((schemas.NativeError as { required: string[] }).required, ['statusCode', 'message']);
  t.truthy((schemas.CompatError as { properties: Record<string, unknown> }).properties.error);
  const ref = (path: string, method: string, status: string) => doc.paths[path]![method]!.responses[status].content['application/json'].schema.$ref;
  t.is(ref('/api/v1/audio/speech', 'post', '400'), '#/components/schemas/CompatError');
  t.is(ref('/api/v1/audio/speech', 'post', '401'), '#/components/schemas/CompatError');
  t.is(ref('/api/v1/tts', 'post', '401'), '#/components/schemas/NativeError');
  t.is(ref('/api/v1/tts/{jobId}', 'get', '404'), '#/components/schemas/NativeError');
  // A route's own fields on its error envelope: the 410 of the closed routes carries cloneUrl.
  const gone = doc.paths['/api/v1/clone']!.post.responses['410'].content['application/json'].schema;
  t.truthy(gone.properties.cloneUrl);
  t.truthy(gone.properties.statusCode);
});

test('security schemes: both key headers everywhere a key is taken, X-AGENT-SECRET on /agent/speech only, none on the open routes', (t) => {
  const schemes = doc.components!.securitySchemes as Record<string, any>;
  t.like(schemes.bearerAuth, { type: 'http', scheme: 'bearer' });
  t.like(schemes.apiKeyHeader, { type: 'apiKey', in: 'header', name: 'X-API-Key' });
  t.like(schemes.agentSecret, { type: 'apiKey', in: 'header', name: 'X-AGENT-SECRET' });
  t.like(schemes.oauth2.flows.authorizationCode, { authorizationUrl: `${p.url}/oauth/authorize`, tokenUrl: `${p.url}/oauth/token` });
  const names = (path: string, method: string) => (doc.paths[path]![method].security as Array<Record<string, unknown>>).map((s) => Object.keys(s)[0] ?? '(none)');
  t.deepEqual(names('/api/v1/tts', 'post'), ['bearerAuth', 'apiKeyHeader', 'oauth2']);
  t.deepEqual(names('/api/v1/agent/speech', 'post'), ['bearerAuth', 'apiKeyHeader', 'agentSecret', 'oauth2']);
  t.deepEqual(names('/api/v1/voices', 'get'), ['bearerAuth', 'apiKeyHeader', 'oauth2', '(none)'], 'a key is optional');
  t.deepEqual(names('/api/v1/engines', 'get'), []);
  const agentSecretUsers = operations().filter(({ op }) => (op.security ?? []).some((s: Record<string, unknown>) => 'agentSecret' in s));
  t.deepEqual(agentSecretUsers.map(({ path }) => path), ['/api/v1/agent/speech']);
});

test('request schemas are the ones the server validates with, and the examples are Vietnamese', (t) => {
  const body = doc.paths['/api/v1/tts']!.post.requestBody.content['application/json'];
  t.deepEqual(body.schema.required, ['text']);
  t.is(body.schema.properties.speed.minimum, 0.5);
  t.is(body.schema.properties.speed.maximum, 2);
  t.false(body.schema.additionalProperties, 'unknown fields are refused, as joi refuses them');
  t.regex(body.example.text, /[ăâđêôơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ]/i);
  const compat = doc.paths['/api/v1/audio/speech']!.post.requestBody.content['application/json'].schema;
  t.deepEqual(compat.properties.response_format.enum, ['mp3', 'opus', 'wav', 'pcm', 'ulaw', null], 'null is "not set" on the drop-in route');
  t.true(compat.additionalProperties, 'the compatible route ignores fields it has no use for');
  const dub = doc.paths['/api/v1/dub']!.post.requestBody.content['multipart/form-data'].schema;
  t.like(dub.properties.audio, { type: 'string', format: 'binary' });
  const batch = doc.paths['/api/v1/tts']!.get.parameters.find((param: { name: string }) => param.name === 'ids');
  t.like(batch, { in: 'query', required: true });
  t.like(doc.paths['/api/v1/tts']!.post.parameters.find((param: { name: string }) => param.name === 'Idempotency-Key'), { in: 'header', required: false });
});

test('the reference follows the loaded plugins: a route of a plugin that is not loaded is not documented', async (t) => {
  const small = await startTestPlatform({ PLUGINS: 'catalog' });
  try {
    const res = await fetch(`${small.url}/api/v1/openapi.json`);
    const paths = Object.keys(((await res.json()) as Doc).paths);
    t.true(paths.includes('/api/v1/engines'));
    t.false(paths.includes('/api/v1/tts'));
    t.false(paths.some((path) => path.startsWith('/oauth/')));
  } finally {
    await small.stop();
  }
});

test('GET /docs renders the reference with Swagger UI, served from this process', async (t) => {
  const page = await fetch(`${p.url}/docs`);
  t.is(page.status, 200);
  const html = await page.text();
  t.regex(html, /\/docs\/assets\/swagger-ui-bundle\.js/);
  t.regex(html, /url: '\/api\/v1\/openapi\.json'/);
  t.regex(page.headers.get('content-security-policy') ?? '', /connect-src 'self'/);
  const script = await fetch(`${p.url}/docs/assets/swagger-ui-bundle.js`);
  t.is(script.status, 200);
  t.regex(script.headers.get('content-type') ?? '', /javascript/);
  t.true((await script.arrayBuffer()).byteLength > 100_000);
  t.is((await fetch(`${p.url}/docs/assets/package.json`)).status, 404, 'only the page\'s own assets');
});

test('a response the reference does not document is named with its route, plugin and status', (t) => {
  const checker = responseChecker(doc);
  const url = new URL(`${p.url}/api/v1/tts/job_x`);
  const headers = new Headers({ 'content-type': 'application/json', 'x-request-id': 'r1' });
  const [undocumented] = checker.check({ method: 'GET', url, status: 418, headers, json: { statusCode: 418, message: 'teapot' } });
  t.regex(undocumented!, /GET \/api\/v1\/tts\/job_x answered 418, which the API reference does not document for GET \/api\/v1\/tts\/\{jobId\} \(route "tts_get" of plugin jobs\)/);
  t.regex(undocumented!, /add responses\[418\]/);
  const [wrongBody] = checker.check({ method: 'GET', url, status: 200, headers, json: { jobId: 'job_x', status: 'lost' } });
  t.regex(wrongBody!, /body that differs from what GET \/api\/v1\/tts\/\{jobId\}/);
  const [noRequestId] = checker.check({ method: 'GET', url, status: 404, headers: new Headers({ 'content-type': 'application/json' }), json: { statusCode: 404, message: 'no' } });
  t.regex(noRequestId!, /header X-Request-Id is documented as always sent but is missing/);
  const [wrongType] = checker.check({ method: 'POST', url: new URL(`${p.url}/api/v1/tts/stream`), status: 200, headers: new Headers({ 'content-type': 'application/json', 'x-request-id': 'r', 'x-sample-rate': '48000', 'x-output-format': 'wav', 'x-stream-format': 'len32-wav-chunks' }), json: {} });
  t.regex(wrongType!, /content type "application\/json", but POST \/api\/v1\/tts\/stream .* documents application\/octet-stream/);
  t.deepEqual(checker.check({ method: 'GET', url: new URL(`${p.url}/api/v1/nowhere`), status: 404, headers }), [], 'not a route: nothing to check');
});

/** Every node of the document, with its JSON pointer. */
function* nodes(value: unknown, pointer = ''): Generator<{ node: Record<string, any>; pointer: string }> {
  if (!value || typeof value !== 'object') return;
  if (!Array.isArray(value)) yield { node: value as Record<string, any>, pointer };
  for (const [key, child] of Object.entries(value)) yield* nodes(child, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
}

/** A validator of the document's node at `pointer` (its $refs resolved within the document), with formats. */
function docValidator(): (pointer: string) => ValidateFunction {
  const addFormats = ajvFormats.default as unknown as (ajv: Ajv2020) => Ajv2020;
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true, logger: false }));
  ajv.addFormat('binary', true);
  ajv.addSchema({ ...doc, servers: undefined }, 'urn:vieneu:openapi-doc');
  const cache = new Map<string, ValidateFunction>();
  return (pointer) => {
    let validate = cache.get(pointer);
    if (!validate) cache.set(pointer, (validate = ajv.compile({ $ref: `urn:vieneu:openapi-doc#${pointer.split('/').map(encodeURIComponent).join('/')}` })));
    return validate;
  };
}

test('every pattern is an ECMA-262 pattern with Unicode semantics, without a regex literal\'s flags glued on', (t) => {
  let count = 0;
  for (const { node, pointer } of nodes(doc)) {
    if (typeof node.pattern !== 'string' || pointer.endsWith('/properties')) continue;
    count++;
    t.notThrows(() => new RegExp(node.pattern, 'u'), `${pointer}: ${node.pattern}`);
    t.notRegex(node.pattern, /\/[dgimsuvy]+$/, `${pointer}: flags glued onto the pattern`);
  }
  t.true(count > 0);
  const text = doc.paths['/api/v1/audiobooks/{bookId}/chapters']!.post.requestBody.content['application/json'].schema.properties.segments.items.properties.text;
  t.is(text.pattern, '\\S');
});

test('no schema in the document is unsatisfiable (`not: {}`), and no oneOf offers "never" or "anything"', (t) => {
  for (const { node, pointer } of nodes(doc)) {
    if (node.not && typeof node.not === 'object' && Object.keys(node.not).length === 0) t.fail(`${pointer}: not: {} (no value can ever match)`);
    for (const branch of (Array.isArray(node.oneOf) ? node.oneOf : [])) {
      if (branch?.not && Object.keys(branch.not).length === 0) t.fail(`${pointer}: oneOf with a branch nothing matches`);
    }
  }
  t.pass();
});

test('POST /audiobooks/{bookId}/chapters: the documented body takes what the server takes and refuses what it refuses', async (t) => {
  const { apiKey } = await p.bootstrap();
  const validate = docValidator()('/paths/~1api~1v1~1audiobooks~1{bookId}~1chapters/post/requestBody/content/application~1json/schema');
  const book = await p.api('/audiobooks', { method: 'POST', key: apiKey, json: { title: 'Truyện thử', narratorVoice: 'vi-north-female-mai' } });
  t.is(book.status, 201);
  const { id } = (await book.json()) as { id: string };
  const schema = doc.paths['/api/v1/audiobooks/{bookId}/chapters']!.post.requestBody.content['application/json'].schema;
  t.regex(schema.properties.title.description, /required otherwise/);
  t.regex(schema.properties.afterSegment.description, /unless `appendTo`/);
  const cases: Array<[string, unknown, boolean]> = [
    ['the README\'s new chapter', { title: 'Chương một', segments: [{ text: 'Ngày xưa có một chú dế.' }] }, true],
    ['append with afterSegment', { appendTo: 1, afterSegment: 1, segments: [{ text: 'Rồi chú đi chơi xa.' }] }, true],
    ['a new chapter without title', { segments: [{ text: 'Chương không tên.' }] }, false],
    ['afterSegment without appendTo', { title: 'Chương hai', afterSegment: 0, segments: [{ text: 'Thêm.' }] }, false],
    ['a title with appendTo', { title: 'Chương hai', appendTo: 1, segments: [{ text: 'Thêm.' }] }, false],
    ['a blank segment', { title: 'Chương hai', segments: [{ text: '   ' }] }, false],
  ];
  for (const [name, body, valid] of cases) {
    t.is(validate(body), valid, `${name}: the reference ${valid ? 'refuses' : 'accepts'} it: ${JSON.stringify(validate.errors)}`);
    const res = await p.api(`/audiobooks/${id}/chapters`, { method: 'POST', key: apiKey, json: body });
    t.is(res.status < 300, valid, `${name}: the server answered ${res.status} ${await res.text()}`);
  }
});

test('every operation that takes OAuth access tokens documents their 403 (INSUFFICIENT_SCOPE, NO_ACTIVE_PLAN) and 401 INVALID_TOKEN', (t) => {
  const withOAuth = operations().filter(({ op }) => (op.security ?? []).some((way: Record<string, unknown>) => 'oauth2' in way));
  t.true(withOAuth.length > 30);
  for (const { method, path, op } of withOAuth) {
    const forbidden = op.responses['403'];
    t.truthy(forbidden?.content?.['application/json'], `${method} ${path} documents a 403`);
    t.regex(forbidden?.description ?? '', /INSUFFICIENT_SCOPE[\s\S]*NO_ACTIVE_PLAN/, `${method} ${path}: 403 names both codes`);
    if (path !== '/api/v1/audio/speech') t.regex(op.responses['401'].description, /INVALID_TOKEN/, `${method} ${path}: 401`);
  }
  // A route's own 403 is kept beside the token's.
  t.regex(doc.paths['/api/v1/tts']!.post.responses['403'].description, /GRANT_TOKENS_EXHAUSTED[\s\S]*INSUFFICIENT_SCOPE/);
  t.is(doc.paths['/api/v1/engines']!.get.responses['403'], undefined, 'no credentials, no 403');
});

test('every example and default in the document is valid by its own schema; error examples carry their own status and a code documented for it', (t) => {
  const at = docValidator();
  let checked = 0;
  const check = (pointer: string, value: unknown, what: string) => {
    checked++;
    const validate = at(pointer);
    if (!validate(value)) t.fail(`${what} at ${pointer} fails its schema: ${JSON.stringify(value).slice(0, 200)} ${JSON.stringify(validate.errors)}`);
  };
  for (const { node, pointer } of nodes(doc)) {
    // A media type or parameter: `example` beside `schema`.
    if (node.schema && typeof node.schema === 'object' && node.example !== undefined) check(`${pointer}/schema`, node.example, 'example');
    // A schema: its `examples` and `default` (annotations, so the schema itself checks them).
    const isSchema = ['type', 'properties', 'anyOf', 'oneOf', 'allOf', 'enum', 'const', '$ref'].some((key) => key in node) && !pointer.endsWith('/properties');
    if (!isSchema) continue;
    for (const example of Array.isArray(node.examples) ? node.examples : []) check(pointer, example, 'example');
    if (node.default !== undefined && !pointer.endsWith('/responses')) check(pointer, node.default, 'default');
  }
  t.true(checked > 300, `${checked} checked`);
  for (const { method, path, op } of operations()) {
    for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
      if (Number(status) < 400) continue;
      const example = response.content?.['application/json']?.example;
      if (!example || !('statusCode' in example)) continue;
      t.is(example.statusCode, Number(status), `${method} ${path} ${status}: its example is a ${example.statusCode}`);
      if (example.code !== undefined) t.true(response.description.includes(`\`${example.code}\``), `${method} ${path} ${status}: ${example.code} is documented for it`);
    }
  }
  const gone = doc.paths['/api/v1/clone']!.post.responses['410'].content['application/json'].example;
  t.like(gone, { statusCode: 410, code: 'CLONE_WEB_ONLY' });
  t.truthy(gone.cloneUrl);
  t.false('default' in doc.paths['/api/v1/srt']!.post.requestBody.content['multipart/form-data'].schema);
});

test('GET /usage documents from and to as the server reads them: a date or a date-time', async (t) => {
  const at = docValidator();
  const params = doc.paths['/api/v1/usage']!.get.parameters as Array<{ name: string }>;
  const index = params.findIndex((param) => param.name === 'from');
  const validate = at(`/paths/~1api~1v1~1usage/get/parameters/${index}/schema`);
  for (const value of ['2026-11-01', '2026-11-01T10:00:00Z']) t.true(validate(value), value);
  t.false(validate('hôm qua'));
  const { apiKey } = await p.bootstrap();
  t.is((await p.api('/usage?from=2026-11-01&to=2026-11-29', { key: apiKey })).status, 200);
  t.is((await p.api('/usage?from=2026-11-01T00:00:00Z&to=2026-11-29T00:00:00Z', { key: apiKey })).status, 200);
});

test('X-RateLimit-* and the Idempotency-Key echo are documented on every answer that carries them, refusals included', async (t) => {
  const { apiKey } = await p.bootstrap();
  const watched = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'idempotency-key'];
  const checker = responseChecker(doc);
  const calls: Array<[string, string, RequestInit & { json?: unknown }]> = [
    ['POST', '/tts', { json: {} }],
    ['POST', '/tts', { json: { text: 'Xin chào' }, headers: { 'idempotency-key': 'short' } }],
    ['POST', '/tts', { json: { text: 'Xin chào', voiceId: 'khong-co-giong-nay' }, headers: { 'idempotency-key': 'khoa-thu-12345678' } }],
    ['POST', '/tts', { body: 'text=xin', headers: { 'content-type': 'text/plain' } }],
    ['GET', '/usage?from=hom-qua', {}],
    ['GET', '/webhooks/we_khongco', {}],
    ['POST', '/tts/stream', { json: { text: 'Xin chào', outputFormat: 'opus', sampleRate: 24000 } }],
  ];
  for (const [method, path, init] of calls) {
    const res = await p.api(path, { method, key: apiKey, ...init });
    t.true(res.status >= 400, `${method} ${path}: ${res.status}`);
    const found = checker.operation(method, `/api/v1${path.split('?')[0]}`)!;
    const documented = Object.keys(found.op.responses[String(res.status)]?.headers ?? {}).map((name) => name.toLowerCase());
    for (const name of watched) {
      if (res.headers.has(name)) t.true(documented.includes(name), `${method} ${path} ${res.status} sends ${name}, which its documented ${res.status} lacks`);
    }
    t.true(res.headers.has('x-ratelimit-limit'), `${method} ${path} ${res.status}: the limiter counted it`);
  }
});

test('the error codes the catalogue and synthesis routes answer are named in their descriptions', async (t) => {
  const { apiKey } = await p.bootstrap();
  const names = (path: string, method: string, status: string) => doc.paths[path]![method].responses[status].description as string;
  for (const path of ['/api/v1/voices', '/api/v1/emotion-tags', '/api/v1/audio/voices']) {
    for (const code of ['ENGINE_RETIRED', 'UNKNOWN_ENGINE']) t.true(names(path, 'get', '400').includes(`\`${code}\``), `GET ${path} 400 names ${code}`);
  }
  for (const path of ['/api/v1/tts', '/api/v1/tts/stream', '/api/v1/agent/speech', '/api/v1/dialogue', '/api/v1/dub', '/api/v1/srt']) {
    t.true(names(path, 'post', '400').includes('`VOICE_NOT_FOUND`'), `POST ${path} names VOICE_NOT_FOUND`);
  }
  for (const path of ['/api/v1/tts', '/api/v1/dialogue', '/api/v1/tts/stream']) t.true(names(path, 'post', '400').includes('`CLONE_UNAVAILABLE`'), `POST ${path}`);
  t.true(names('/api/v1/tts/stream', 'post', '400').includes('`SAMPLE_RATE_CONFLICT`'));
  for (const path of ['/api/v1/srt', '/api/v1/dub']) t.true(names(path, 'post', '400').includes('`FILE_REQUIRED`'), `POST ${path}`);
  t.false(names('/api/v1/audio/speech', 'post', '429').includes('RATE_LIMITED'), 'the compatible envelope\'s code is always null');
  t.regex(names('/api/v1/audio/speech', 'post', '429'), /`rate_limit_exceeded`/);
  // What the server answers, named where it is documented.
  const answered = async (method: string, path: string, init: RequestInit & { json?: unknown; key?: string | null }) => {
    const res = await p.api(path, { method, ...init });
    const body = (await res.json()) as { code?: string };
    const found = responseChecker(doc).operation(method, `/api/v1${path.split('?')[0]}`)!;
    t.true(String(found.op.responses[String(res.status)]?.description).includes(`\`${body.code}\``), `${method} ${path} answered ${res.status} ${body.code}, not named in its description`);
  };
  await answered('GET', '/voices?engine=v3', {});
  await answered('GET', '/emotion-tags?engine=v9', {});
  await answered('GET', '/audio/voices?engine=v3', { key: apiKey });
  await answered('POST', '/tts', { key: apiKey, json: { text: 'Xin chào', voiceId: 'khong-co-giong-nay' } });
  await answered('POST', '/tts/stream', { key: apiKey, json: { text: 'Xin chào', outputFormat: 'opus', sampleRate: 24000 } });
  await answered('POST', '/dialogue', { key: apiKey, json: { inputs: [{ voiceId: 'khong-co-giong-nay', text: 'Xin chào' }] } });
  const form = new FormData();
  form.set('voiceId', 'vi-north-female-mai');
  await answered('POST', '/srt', { key: apiKey, body: form });
});
