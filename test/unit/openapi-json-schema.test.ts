import test from 'ava';
import Joi from 'joi';
import { Ajv2020 } from 'ajv/dist/2020.js';
import * as ajvFormats from 'ajv-formats';
import { jsonSchemaPattern, toJsonSchema, type JsonSchema } from '../../core/http/openapi/json-schema.ts';
import { assembleResponses, documentedCodes, type CoreAnswers } from '../../core/http/openapi/responses.ts';
import { addChapterBody } from '../../plugins/audiobooks/schemas.ts';
import { usageQuery } from '../../plugins/usage/schemas.ts';
import { srtForm } from '../../plugins/srt/schemas.ts';
import { audioSpeechBody } from '../../plugins/speech/schemas.ts';

/**
 * The joi-to-JSON-Schema conversion of the API reference
 * (core/http/openapi/json-schema.ts): what a client validating against
 * the reference accepts must be what joi accepts, for regexes, conditions
 * on other fields, ISO dates and defaults.
 */

const addFormats = ajvFormats.default as unknown as (ajv: Ajv2020) => Ajv2020;
const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true, logger: false }));
ajv.addFormat('binary', true);

/** Whether the reference's schema and joi agree on a value. */
function agree(t: import('ava').ExecutionContext, schema: Joi.Schema, values: unknown[]): void {
  const validate = ajv.compile(toJsonSchema(schema));
  for (const value of values) {
    const joiSays = !schema.validate(value).error;
    t.is(validate(value), joiSays, `${JSON.stringify(value)}: joi says ${joiSays ? 'valid' : 'invalid'}, the reference ${joiSays ? 'refuses' : 'accepts'} it (${JSON.stringify(validate.errors)})`);
  }
}

test('a joi regex becomes its source alone; flags JSON Schema cannot carry leave the pattern out, said in the description', (t) => {
  t.deepEqual(jsonSchemaPattern('/\\S/u'), { pattern: '\\S' });
  t.deepEqual(jsonSchemaPattern('/^a\\/b$/'), { pattern: '^a\\/b$' });
  t.deepEqual(jsonSchemaPattern('/^x$/i'), { unstated: '/^x$/i' });
  t.deepEqual(jsonSchemaPattern('/a.b/s'), { unstated: '/a.b/s' });
  t.deepEqual(jsonSchemaPattern('/^\\-$/'), { unstated: '/^\\-$/' }, 'not a pattern with Unicode semantics');
  const schema = toJsonSchema(Joi.object({
    text: Joi.string().pattern(/\S/u),
    word: Joi.string().pattern(/^[a-z]+$/i).description('a word'),
    other: Joi.string().pattern(/^x/, { invert: true }).pattern(/y$/),
  }));
  const properties = schema.properties as Record<string, JsonSchema>;
  t.deepEqual(properties.text, { type: 'string', pattern: '\\S' });
  t.is(properties.word!.pattern, undefined);
  t.regex(properties.word!.description as string, /^a word\. Must match the regular expression `\/\^\[a-z\]\+\$\/i`/);
  t.deepEqual(properties.other, { type: 'string', not: { pattern: '^x' }, pattern: 'y$' });
  agree(t, Joi.object({ text: Joi.string().pattern(/\S/u) }), [{ text: 'Ngày xưa' }, { text: '   ' }, { text: 'a/u' }]);
});

test('a condition on a sibling is the union of its branches on the property and exact if/then/else on the object: no `not: {}`', (t) => {
  const schema = toJsonSchema(addChapterBody);
  const properties = schema.properties as Record<string, JsonSchema>;
  t.deepEqual(schema.required, ['segments'], 'only what is required whatever the other fields say');
  t.false(JSON.stringify(schema).includes('"not":{}'));
  t.like(properties.afterSegment, { type: 'integer', minimum: 0 });
  t.regex(properties.afterSegment!.description as string, /Not allowed unless `appendTo` is present/);
  t.regex(properties.title!.description as string, /Not allowed when `appendTo` is present; required otherwise/);
  t.is(properties.title!.oneOf, undefined);
  agree(t, addChapterBody, [
    { title: 'Chương một', segments: [{ text: 'Ngày xưa có một chú dế.' }] },
    { appendTo: 1, afterSegment: 1, segments: [{ text: 'Rồi chú đi chơi xa.' }] },
    { appendTo: 1, segments: [{ text: 'Rồi chú đi chơi xa.' }] },
    { segments: [{ text: 'Chương không tên.' }] },
    { title: 'Chương hai', appendTo: 1, segments: [{ text: 'Thêm.' }] },
    { title: 'Chương ba', afterSegment: 2, segments: [{ text: 'Thêm.' }] },
    { title: 'Chương bốn', segments: [{ text: ' ' }] },
  ]);
});

test('switch, literal and truthy conditions agree with joi', (t) => {
  const schema = Joi.object({
    mode: Joi.any(),
    level: Joi.number().when('mode', { switch: [{ is: 'fast', then: Joi.required() }, { is: 'off', then: Joi.forbidden(), otherwise: Joi.optional() }] }),
    note: Joi.string().when('mode', { then: Joi.required() }),
    size: Joi.string().when('mode', { is: Joi.number().min(3), then: Joi.valid('s', 'm'), otherwise: Joi.forbidden() }),
  });
  agree(t, schema, [
    {}, { mode: 'fast' }, { mode: 'fast', level: 1, note: 'x' }, { mode: 'off', level: 1, note: 'x' }, { mode: 'off', note: 'x' },
    { mode: 0, level: 2 }, { mode: false }, { mode: 5, note: 'x', size: 's' }, { mode: 5, note: 'x', size: 'l' }, { mode: 1, note: 'x', size: 's' },
    { size: 'm' },
  ]);
  t.false(JSON.stringify(toJsonSchema(schema)).includes('"not":{}'));
});

test('an ISO date of joi is a date or a date-time, and what the reference accepts joi accepts', (t) => {
  const from = (toJsonSchema(usageQuery).properties as Record<string, JsonSchema>).from!;
  t.is(from.format, undefined, 'not date-time alone: GET /usage takes 2026-11-01');
  t.deepEqual(from.anyOf, [{ format: 'date' }, { format: 'date-time' }]);
  const validate = ajv.compile(from);
  for (const value of ['2026-11-01', '2026-11-01T10:00:00Z', '2026-11-01T10:00:00.123+07:00']) {
    t.true(validate(value), value);
    t.falsy(usageQuery.validate({ from: value }).error, `the server takes ${value}`);
  }
  for (const value of ['yesterday', '2026-02-30', '2026-11-01t10:00:00z', '2026-11-01T23:59:60Z']) {
    t.false(validate(value), `${value} is not documented as accepted`);
    t.truthy(usageQuery.validate({ from: value }).error, `the server refuses ${value}`);
  }
});

test('a default its own schema refuses is dropped (the /srt form\'s {} without its required file)', (t) => {
  const form = toJsonSchema(srtForm);
  t.deepEqual(form.required, ['file']);
  t.false('default' in form);
  t.deepEqual((toJsonSchema(Joi.object({ a: Joi.string() }).default({})) as JsonSchema).default, {}, 'a default that satisfies the schema stays');
});

const core = (over: Partial<CoreAnswers> = {}): CoreAnswers => ({
  envelope: 'native', auth: true, oauth: true, validated: true, fields: true, jsonBody: true, multipart: false, rateLimited: true, edge: true, ...over,
});

test('error examples match their status, code and schema; X-RateLimit-* wherever the limiter has counted the request', (t) => {
  const responses = assembleResponses({
    201: { description: 'Created', schema: Joi.object({ id: Joi.string().required() }) },
    404: { description: '`THING_NOT_FOUND`: no such thing, or another account\'s' },
    410: { description: '`GONE_FOR_GOOD`: moved elsewhere', schema: Joi.object({ movedTo: Joi.string().uri().required().example('https://example.vn/') }) },
  }, core());
  for (const [status, response] of Object.entries(responses)) {
    const example = (response.content as Record<string, JsonSchema> | undefined)?.['application/json']?.example as Record<string, unknown> | undefined;
    if (Number(status) < 400) continue;
    t.is(example?.statusCode, Number(status), `${status}'s example is a ${status}`);
    const codes = documentedCodes(response.description as string);
    t.is(example?.code, codes[0], `${status}'s example has the first code its description names`);
  }
  const example = (status: number) => (responses[status]!.content as Record<string, JsonSchema>)['application/json']!.example as Record<string, unknown>;
  t.like(example(404), { code: 'THING_NOT_FOUND', message: 'No such thing, or another account\'s.' });
  t.like(example(410), { code: 'GONE_FOR_GOOD', movedTo: 'https://example.vn/' }, 'a property the status requires is in its example');
  t.like(example(403), { code: 'INSUFFICIENT_SCOPE' });
  t.like(example(429), { code: 'RATE_LIMITED', retryAfterSeconds: 12 });
  t.like(example(503), { code: 'SERVICE_UNAVAILABLE', retryAfterSeconds: 5 });
  t.regex(responses[403]!.description as string, /`INSUFFICIENT_SCOPE`.*`NO_ACTIVE_PLAN`/);
  t.regex(responses[401]!.description as string, /`INVALID_TOKEN`/);
  const limited = (status: number) => 'X-RateLimit-Limit' in (responses[status]!.headers as JsonSchema);
  for (const status of [201, 400, 404, 410, 413, 415, 429, 500, 503]) t.true(limited(status), `${status} may carry X-RateLimit-*`);
  t.false(limited(401), 'a 401 comes before the limiter');
  t.false(limited(403), 'the access token\'s 403 comes before the limiter');
  const compat = assembleResponses({ 429: { description: '`rate_limit_exceeded`: the rate limit or a spent cap' } }, core({ envelope: 'compat' }));
  t.notRegex(compat[429]!.description as string, /RATE_LIMITED/, 'the compatible envelope has no code');
  t.like((compat[429]!.content as Record<string, JsonSchema>)['application/json']!.example, { error: { type: 'rate_limit_exceeded', code: null } });
});

test('a field that takes null as "not set" (`.empty(null)`) takes null in the reference too, hinted enums included (POST /audio/speech)', (t) => {
  agree(t, audioSpeechBody, [
    { input: 'Xin chào.', voice: 'Nam' },
    { input: 'Xin chào.', voice: 'Nam', response_format: null, sample_rate: null, speed: null, stream_format: null, emotion: null, aiRefine: null },
    { input: 'Xin chào.', voice: 'Nam', response_format: 'flac' },
    { input: 'Xin chào.', voice: 'Nam', speed: 9 },
  ]);
});
