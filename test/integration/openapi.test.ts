import test from 'ava';
import { validate } from '@readme/openapi-parser';
import type { OpenAPIV3_1 } from 'openapi-types';
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
  t.deepEqual(compat.properties.response_format.enum, ['mp3', 'opus', 'wav', 'pcm', 'ulaw']);
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
