import test from 'ava';
import { existsSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { connectApp, createUser } from '../helpers/oauth-flow.ts';

/**
 * SPEC MCP server, audiobook tools, over the audiobook routes
 * (plugins/audiobooks): create with a cast, add a chapter (and continue it
 * with after_segment), start, follow to completion with MP3 links, list,
 * cancel; the audiobook prompt comes with them.
 */

const PLUGIN = new URL('../../plugins/audiobooks/index.ts', import.meta.url);

if (!existsSync(PLUGIN)) {
  console.log('mcp-audiobooks: skipped, plugins/audiobooks is not in this tree (the audiobook tools register only with it)');
  test.skip('MCP audiobook tools', () => {});
} else {
  let p: TestPlatform;
  test.before(async () => {
    p = await startTestPlatform({
      PLUGINS: 'catalog,account,speech,jobs,audiobooks,oauth,mcp', MCP_POLL_MS: '200', SIGNIN_PER_MINUTE: '1000',
      // Fast books, as the audiobook tests run them.
      AUDIOBOOK_TICK_MS: '50', AUDIOBOOK_PART_CHARS: '120', AUDIOBOOK_RETRY_SECONDS: '0.2', AUDIOBOOK_LEASE_SECONDS: '2',
      AUDIOBOOK_QUOTA_RETRY_SECONDS: '0.2', AUDIOBOOK_RENDER_SLOTS: '1', AUDIOBOOK_MASTER_RETRY_SECONDS: '0.1,0.2',
    });
  });
  test.after.always(async () => {
    await p?.stop();
  });

  /** Connected with an API key, or (`oauth`) through the whole OAuth flow as a signed-in user. */
  async function connect(how: 'key' | 'oauth' = 'key') {
    let credential: string;
    if (how === 'oauth') credential = (await connectApp(p, await createUser(p))).tokens.access_token;
    else credential = (await p.bootstrap({ grant: { totalTokens: 1_000_000 } })).apiKey;
    const mcp = new Client({ name: 'book-test', version: '1' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${p.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${credential}` } } }));
    return { mcp };
  }
  const text = (r: any): string => r.content.map((c: { text: string }) => c.text).join('\n');

  test('the audiobook tools are listed with the others, and make_audiobook with the prompts', async (t) => {
    const { mcp } = await connect();
    const names = (await mcp.listTools()).tools.map((tool) => tool.name);
    t.deepEqual(names.slice(6), ['create_audiobook', 'add_audiobook_chapter', 'start_audiobook', 'get_audiobook', 'list_audiobooks', 'cancel_audiobook']);
    t.true((await mcp.listPrompts()).prompts.some((pr) => pr.name === 'make_audiobook'));
    await mcp.close();
  });

  test('an audiobook made through MCP by an app connected with OAuth: create, add and continue a chapter, start, follow to MP3 links, list', async (t) => {
    const { mcp } = await connect('oauth');
    const created = await mcp.callTool({ name: 'create_audiobook', arguments: { title: 'Dế Mèn', author: null, narrator_voice: 'Mai', cast: [{ speaker: 'Dế Mèn', voice_id: 'vi-north-male-minh' }] } });
    t.falsy(created.isError, text(created));
    const book = (created.structuredContent as { book: { id: string; status: string } }).book;
    t.is(book.status, 'draft');
    const added = await mcp.callTool({ name: 'add_audiobook_chapter', arguments: {
      book_id: book.id, title: 'Chương một', segments: [{ text: 'Tôi sống độc lập từ thuở bé.' }, { text: 'Chào các bạn!', speaker: 'Dế Mèn' }],
    } });
    t.falsy(added.isError, text(added));
    // The view and the text describe the book, as every other audiobook tool's do (they read "undefined" before).
    t.like((added.structuredContent as { book: unknown }).book, { id: book.id, title: 'Dế Mèn', status: 'draft', totals: { chapters: 1 } });
    t.regex(text(added), /^Added chapter 1\.\n"Dế Mèn" \(abk_[^)]+\) is draft: 0\/1 chapters done/);
    const wrongCount = await mcp.callTool({ name: 'add_audiobook_chapter', arguments: { book_id: book.id, append_to: 1, after_segment: 5, text: 'Thêm một đoạn.' } });
    t.true(wrongCount.isError);
    t.regex(text(wrongCount), /^Chapter 1 has 2 segments, not 5\..* Send after_segment 2 to append after them\./, 'segment_mismatch tells the model what to send');
    t.notRegex(text(wrongCount), /afterSegment/, 'in the tool\'s argument names, not the route\'s');
    const continued = await mcp.callTool({ name: 'add_audiobook_chapter', arguments: { book_id: book.id, append_to: 1, after_segment: 2, text: 'Thêm một đoạn.' } });
    t.falsy(continued.isError, text(continued));
    const started = await mcp.callTool({ name: 'start_audiobook', arguments: { book_id: book.id } });
    t.falsy(started.isError, text(started));
    let done: any;
    for (let i = 0; i < 200; i++) {
      done = await mcp.callTool({ name: 'get_audiobook', arguments: { book_id: book.id } });
      if (done.structuredContent.book.status === 'completed') break;
      await new Promise((r) => setTimeout(r, 250));
    }
    t.is(done.structuredContent.book.status, 'completed', text(done));
    const chapter = done.structuredContent.book.chapters[0];
    t.is(chapter.audioFormat, 'mp3');
    const audio = await fetch(chapter.audioUrl);
    t.is(audio.headers.get('content-type'), 'audio/mpeg');
    t.regex(text(done), /1\/1 chapters done/);
    const listed = await mcp.callTool({ name: 'list_audiobooks', arguments: { page: null, limit: 10 } });
    t.deepEqual((listed.structuredContent as { items: Array<{ id: string }> }).items.map((b) => b.id), [book.id]);
    await mcp.close();
  });

  test('cancel_audiobook stops a started book', async (t) => {
    const { mcp } = await connect();
    const created = await mcp.callTool({ name: 'create_audiobook', arguments: { title: 'Hủy', narrator_voice: 'Minh' } });
    const id = (created.structuredContent as { book: { id: string } }).book.id;
    await mcp.callTool({ name: 'add_audiobook_chapter', arguments: { book_id: id, title: 'Một', text: 'Đoạn một.\n\nĐoạn hai.' } });
    await mcp.callTool({ name: 'start_audiobook', arguments: { book_id: id } });
    const cancelled = await mcp.callTool({ name: 'cancel_audiobook', arguments: { book_id: id } });
    t.falsy(cancelled.isError, text(cancelled));
    t.true(['cancelled', 'completed'].includes((cancelled.structuredContent as { book: { status: string } }).book.status));
    const unknown = await mcp.callTool({ name: 'get_audiobook', arguments: { book_id: 'abk_missing' } });
    t.true(unknown.isError);
    t.regex(text(unknown), /Check the id/);
    for (const tool of ['get_audiobook', 'start_audiobook', 'cancel_audiobook']) {
      const strange = await mcp.callTool({ name: tool, arguments: { book_id: 'abk_\ud800' } });
      t.true(strange.isError);
      t.regex(text(strange), /"book_id" must be a book id as a tool returned it/);
    }
    await mcp.close();
  });

  test('audiobook refusals in the tools\' terms: the chapter\'s text or segments, add_audiobook_chapter, a live key no argument gives', async (t) => {
    const { mcp } = await connect();
    const created = await mcp.callTool({ name: 'create_audiobook', arguments: { title: 'Trống', narrator_voice: 'Mai' } });
    const id = (created.structuredContent as { book: { id: string } }).book.id;
    const empty = await mcp.callTool({ name: 'add_audiobook_chapter', arguments: { book_id: id, title: 'Một' } });
    t.true(empty.isError);
    t.is(text(empty), 'Invalid arguments for add_audiobook_chapter: send the chapter as segments or as text. Fix them and call again.');
    const start = await mcp.callTool({ name: 'start_audiobook', arguments: { book_id: id } });
    t.true(start.isError);
    t.is(text(start), 'The book has no chapters yet; add one with add_audiobook_chapter. Then call start_audiobook again.');
    const schema = (await mcp.listTools()).tools.find((tool) => tool.name === 'get_audiobook')!.inputSchema.properties as Record<string, unknown>;
    t.like(schema.book_id, { maxLength: 200, pattern: '^[A-Za-z0-9_-]+$' });
    await mcp.close();
    const { apiKey } = await p.bootstrap({ kind: 'test', grant: { totalTokens: 1_000_000 } });
    const tester = new Client({ name: 'book-test', version: '1' });
    await tester.connect(new StreamableHTTPClientTransport(new URL(`${p.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${apiKey}` } } }));
    for (const [name, args] of [['create_audiobook', { title: 'X', narrator_voice: 'Mai' }], ['list_audiobooks', {}]] as const) {
      const refused = await tester.callTool({ name, arguments: args });
      t.like((refused.structuredContent as { error: unknown }).error, { status: 400, code: 'live_key_required' }, name);
      t.notRegex(text(refused), /Fix the arguments/, name);
    }
    await tester.close();
  });
}
