import test from 'ava';
import { refusal, type ApiCaller } from '../../plugins/mcp/api.ts';
import { envelopeRefusal } from '../../plugins/mcp/envelope.ts';
import { createMcpServerDefinition } from '../../plugins/mcp/server.ts';
import { invokeTool, type ToolContext, type ToolDefinition } from '../../plugins/mcp/tool.ts';

/**
 * SPEC MCP server, without a platform: tool arguments are checked as their
 * input schemas say (no type conversion, id limits advertised), refusal
 * texts name the tool's own arguments and tools, and the JSON-RPC envelope
 * of 2025-era requests is checked before the SDK's transport.
 */

const def = createMcpServerDefinition({ audiobooks: true, baseUrl: () => 'http://127.0.0.1:1' });
const tool = (name: string) => def.tools.find((t) => t.name === name)!;
const text = (result: { content: Array<{ text: string }> }) => result.content.map((c) => c.text).join('\n');

/** A context whose API answers `answer` (or throws it), recording the calls. */
function context(answer: (method: string, path: string) => unknown = () => { throw new Error('no API call expected'); }, testKey = false) {
  const calls: string[] = [];
  const api: ApiCaller = {
    async json(method, path) {
      calls.push(`${method} ${path}`);
      return { status: 200, body: answer(method, path) as any, headers: new Headers() };
    },
    async raw(method, path) {
      calls.push(`${method} ${path}`);
      return answer(method, path) as Response;
    },
  };
  const ctx: ToolContext = { api, waitSeconds: 0, pollMs: 50, testKey };
  return { ctx, calls };
}

type Schema = { type?: string | string[]; properties?: Record<string, Schema>; items?: Schema };
const typesOf = (schema: Schema) => (Array.isArray(schema.type) ? schema.type : [schema.type]);

test('an argument of another JSON type than its schema says is refused, never converted ("5" for an integer, "1.5" for a number)', async (t) => {
  let checked = 0;
  for (const definition of def.tools as ToolDefinition[]) {
    for (const [name, schema] of Object.entries((definition.inputSchema as Schema).properties ?? {})) {
      const types = typesOf(schema);
      const wrong = types.includes('integer') ? '5' : types.includes('number') ? '1.5' : types.includes('boolean') ? 'true' : null;
      if (wrong === null) continue;
      const { ctx, calls } = context();
      const result = await invokeTool(definition, { [name]: wrong }, ctx);
      t.true(result.isError, `${definition.name}.${name}`);
      t.regex(text(result as any), new RegExp(`"${name}" must be a (number|boolean)`), `${definition.name}.${name}`);
      t.deepEqual(calls, [], 'no route is called');
      checked++;
    }
  }
  t.true(checked >= 6, 'limit, speed, append_to, after_segment, page, limit');
  const segments = await invokeTool(tool('add_audiobook_chapter'), { book_id: 'abk_1', segments: [{ text: 'Một.', scene_break: 'true' }] }, context().ctx);
  t.regex(text(segments as any), /"segments\[0\]\.scene_break" must be a boolean/, 'nested arguments too');
  // The right types still pass, and strings are still trimmed.
  const voices = [{ id: 'vi-north-female-mai', name: 'Mai', description: 'Giọng nữ', gender: 'female', region: 'north', engine: 'v4', kind: 'catalog' }];
  const listed = await invokeTool(tool('list_voices'), { search: '  Mai ', limit: 5 }, context(() => ({ voices })).ctx);
  t.falsy(listed.isError, text(listed as any));
  t.is((listed.structuredContent as { count: number }).count, 1);
});

test('id arguments advertise what the tools enforce: at most 200 letters, digits, "_" and "-"', async (t) => {
  const idTools = (def.tools as ToolDefinition[]).filter((d) => ['job_id', 'book_id'].some((id) => (d.inputSchema as Schema).properties?.[id]));
  t.is(idTools.length, 5, 'get_speech_status, add_audiobook_chapter, start_, get_ and cancel_audiobook');
  for (const definition of idTools) {
    const name = (definition.inputSchema as Schema).properties!.job_id ? 'job_id' : 'book_id';
    const schema = (definition.inputSchema as { properties: Record<string, { minLength: number; maxLength: number; pattern: string }> }).properties[name];
    t.like(schema, { minLength: 1, maxLength: 200 });
    const fitsSchema = (value: string) => value.length >= schema.minLength && value.length <= schema.maxLength && new RegExp(schema.pattern, 'u').test(value);
    for (const value of ['job_abc-1', 'a'.repeat(200), 'a'.repeat(201), '../balance', 'job.1', 'job/x', 'job_\u00e9']) {
      const { error } = definition.args.validate({ book_id: 'abk_1', [name]: value, text: 'x' });
      t.is(!error?.details.some((d) => d.path[0] === name), fitsSchema(value), `${definition.name}.${name} = ${value.slice(0, 20)}`);
    }
  }
});

test('refusal texts name the tool\'s arguments and tools, never the routes\'', async (t) => {
  const failing = (err: unknown) => context(() => { throw err; }).ctx;
  // /audio/speech names the text `input`.
  const empty = await invokeTool(tool('text_to_speech'), { text: '   ' }, failing(refusal(400, { error: { message: '"input" contains nothing that can be spoken.', type: 'invalid_request_error', param: 'input', code: null } })));
  t.is(text(empty as any), '"text" contains nothing that can be spoken. Fix the arguments and try again.');
  const voice = await invokeTool(tool('text_to_speech'), { text: 'Xin chào', voice: 'nope' }, failing(refusal(400, { error: { message: 'Unknown voice "nope". List voices with GET /voices?engine=v4.', type: 'invalid_request_error', param: 'voice', code: null } })));
  t.is(text(voice as any), 'Unknown voice "nope". Call list_voices to pick a valid voice id.');
  const mismatch = await invokeTool(tool('add_audiobook_chapter'), { book_id: 'abk_1', append_to: 1, after_segment: 5, text: 'Ba.' }, failing(refusal(409, {
    message: 'Chapter 1 has 2 segments, not 5. It ends with "Hai.". Send afterSegment 2 to append after them.', code: 'segment_mismatch',
  })));
  t.regex(text(mismatch as any), /Send after_segment 2 to append after them\..*after_segment/);
  t.notRegex(text(mismatch as any), /afterSegment/);
  const cast = await invokeTool(tool('add_audiobook_chapter'), { book_id: 'abk_1', segments: [{ text: 'a', speaker: 'X' }] }, failing(refusal(400, {
    message: 'Speaker "X" is not in the book\'s cast; send it in cast with a voiceId.', code: 'unknown_speaker',
  })));
  t.regex(text(cast as any), /send it in cast with a voice_id\. Fix the arguments and try again\.$/);
  const noChapters = await invokeTool(tool('start_audiobook'), { book_id: 'abk_1' }, failing(refusal(400, {
    message: 'The book has no chapters yet; add one with POST /audiobooks/{bookId}/chapters.', code: 'no_chapters',
  })));
  t.is(text(noChapters as any), 'The book has no chapters yet; add one with add_audiobook_chapter. Then call start_audiobook again.');
  const neither = await invokeTool(tool('add_audiobook_chapter'), { book_id: 'abk_1' }, context().ctx);
  t.is(text(neither as any), 'Invalid arguments for add_audiobook_chapter: send the chapter as segments or as text. Fix them and call again.');
  const both = await invokeTool(tool('add_audiobook_chapter'), { book_id: 'abk_1', text: 'a', segments: [{ text: 'b' }] }, context().ctx);
  t.regex(text(both as any), /send segments or text, not both/);
});

test('"Fix the arguments" only where an argument can fix the refusal; the code survives the compatible envelope', (t) => {
  const liveKey = refusal(400, { message: 'Audiobooks need a live key (vn_sk_…); test keys cannot create or render books.', code: 'live_key_required' });
  t.notRegex(liveKey.message, /Fix the arguments/);
  t.regex(liveKey.message, /live key; no argument changes this\.$/);
  const words = refusal(400, { message: 'Test keys are limited to 100 words per request; this text has more.', code: 'TEST_KEY_WORD_LIMIT' });
  t.notRegex(words.message, /Fix the arguments/);
  t.is(refusal(400, { message: 'speed must be a number', code: 'INVALID' }).message, 'speed must be a number Fix the arguments and try again.');
  // The compatible envelope's `code` is read like the native one's.
  const compat = refusal(403, { error: { message: 'The grant has too few tokens left for this request.', type: 'insufficient_quota', param: null, code: 'GRANT_TOKENS_EXHAUSTED' } });
  t.is(compat.details.code, 'GRANT_TOKENS_EXHAUSTED');
  t.regex(compat.message, /Tell the user to top up/);
});

test('the JSON-RPC envelope of a 2025-era request: -32600 for an empty batch, a value that is no message, and a batch after 2025-03-26', (t) => {
  const request = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
  t.is(envelopeRefusal(request, undefined), null);
  t.is(envelopeRefusal({ jsonrpc: '2.0', method: 'notifications/initialized' }, '2025-06-18'), null, 'a notification');
  t.is(envelopeRefusal({ jsonrpc: '2.0', id: 1, result: {} }, '2025-06-18'), null, 'a response');
  t.is(envelopeRefusal([request, { ...request, id: 2 }], undefined), null, 'a batch of a 2025-03-26 client (no header: the SDK\'s default revision)');
  t.is(envelopeRefusal([request], '2025-03-26'), null);
  const refused = (body: unknown, header?: string) => {
    const answer = envelopeRefusal(body, header);
    return answer && { status: answer.status, code: answer.body.error.code, id: answer.body.id };
  };
  t.deepEqual(refused([]), { status: 400, code: -32600, id: null });
  t.deepEqual(refused({ foo: 1 }), { status: 400, code: -32600, id: null });
  t.deepEqual(refused({ jsonrpc: '1.0', id: 1, method: 'tools/list' }), { status: 400, code: -32600, id: 1 }, 'the id, when it is a valid one');
  t.deepEqual(refused({ jsonrpc: '2.0', id: null, method: 'tools/list' }), { status: 400, code: -32600, id: null });
  t.deepEqual(refused([1]), { status: 400, code: -32600, id: null });
  for (const version of ['2025-06-18', '2025-11-25']) t.deepEqual(refused([request], version), { status: 400, code: -32600, id: null }, version);
  const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } } };
  t.deepEqual(refused([initialize]), { status: 400, code: -32600, id: null }, 'a batched initialize asking for 2025-06-18');
  t.is(envelopeRefusal([{ ...initialize, params: { ...initialize.params, protocolVersion: '2025-03-26' } }], undefined), null);
});
