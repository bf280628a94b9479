import test from 'ava';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser, Frame, Page } from 'playwright-core';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { hostPage } from '../helpers/mcp-app-host.ts';

/**
 * SPEC MCP server, interactive player resources: the three `ui://vieneu/…`
 * pages run in headless Chromium (Debian's chromium driven by
 * playwright-core) inside a host that speaks the MCP Apps protocol, with the
 * CSP the resources declare. The player plays the real audio, the audiobook
 * page shows progress, the capabilities page lists the tools; a screenshot
 * of each is written to test-output/ and named in the test log.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const OUTPUT = path.resolve('test-output');

if (!existsSync(CHROMIUM)) {
  console.log(`mcp-ui: skipped, no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);
  test.skip('MCP Apps views in Chromium', () => {});
} else {
  let p: TestPlatform;
  let browser: Browser;
  let mcp: Client;

  test.before(async () => {
    const { chromium } = await import('playwright-core');
    p = await startTestPlatform({ PLUGINS: 'catalog,account,speech,jobs,oauth,mcp', MCP_POLL_MS: '200' });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--autoplay-policy=no-user-gesture-required'],
    });
    const { apiKey } = await p.bootstrap({ grant: { totalTokens: 1_000_000 } });
    mcp = new Client({ name: 'ui-test', version: '1' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${p.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${apiKey}` } } }));
    mkdirSync(OUTPUT, { recursive: true });
  });
  test.after.always(async () => {
    await mcp?.close();
    await browser?.close();
    await p?.stop();
  });

  /**
   * Opens a view in the test host with a tool's input and result; returns the page and the view's frame.
   * `beforeCall` holds each tool call the view makes through the host until it resolves.
   */
  async function openView(uri: string, toolInput: unknown, toolResult: unknown, beforeCall?: () => Promise<void>): Promise<{ page: Page; view: Frame }> {
    const resource = (await mcp.readResource({ uri })).contents[0] as unknown as { text: string; _meta: { ui: { csp: { resourceDomains: string[]; connectDomains: string[] } } } };
    const page = await browser.newPage({ viewport: { width: 600, height: 460 } });
    const calls: string[] = [];
    await page.exposeFunction('hostCallTool', async (name: string, args: Record<string, unknown>) => {
      calls.push(name);
      await beforeCall?.();
      return mcp.callTool({ name, arguments: args });
    });
    (page as Page & { toolCalls?: string[] }).toolCalls = calls;
    await page.setContent(hostPage({ html: resource.text, csp: resource._meta.ui.csp, toolInput, toolResult }));
    const handle = await page.waitForSelector('iframe#view');
    const view = (await handle.contentFrame())!;
    await view.waitForLoadState();
    return { page, view };
  }

  async function screenshot(t: { log(...v: unknown[]): void }, page: Page, name: string): Promise<void> {
    const file = path.join(OUTPUT, `mcp-ui-${name}.png`);
    await page.screenshot({ path: file });
    t.log(`screenshot: ${file} (${statSync(file).size} bytes)`);
  }

  test('the player view plays the MP3 that text_to_speech made', async (t) => {
    const input = { text: 'Xin chào! Đây là trình phát của VieNeu.', voice: 'vi-south-female-lan' };
    const result = await mcp.callTool({ name: 'text_to_speech', arguments: input });
    const audioUrl = (result.structuredContent as { audioUrl: string }).audioUrl;
    const { page, view } = await openView('ui://vieneu/player.html', input, result);
    await view.waitForFunction(() => document.getElementById('status')?.textContent === 'Ready (MP3)');
    t.is(await view.$eval('#input', (el) => el.textContent), `“${input.text}”`);
    t.is(await view.$eval('audio', (el) => (el as HTMLAudioElement).src), audioUrl);
    const played = await view.$eval('audio', async (el) => {
      const audio = el as HTMLAudioElement;
      audio.muted = true;
      await audio.play();
      await new Promise((resolve) => setTimeout(resolve, 600));
      return { duration: audio.duration, currentTime: audio.currentTime, error: audio.error?.message ?? null, paused: audio.paused };
    });
    t.is(played.error, null);
    t.true(played.duration > 1, `decoded ${played.duration} s of audio`);
    t.true(played.currentTime > 0, 'it is playing');
    t.deepEqual(await page.evaluate(() => (window as unknown as { hostLog: string[] }).hostLog.slice(0, 2)), ['ui/initialize', 'ui/notifications/initialized']);
    await screenshot(t, page, 'player');
    await page.close();
  });

  test('the player view follows a job that is not ready by calling get_speech_status through the host', async (t) => {
    const done = await mcp.callTool({ name: 'text_to_speech', arguments: { text: 'Câu này sẽ hiện ra sau khi xong.' } });
    const { jobId } = done.structuredContent as { jobId: string };
    const pending = { content: [{ type: 'text', text: 'still rendering' }], structuredContent: { jobId, status: 'processing' } };
    // The view's status check is held until the test has seen "Rendering…": in CI the view once went from it to
    // "Ready" (its check 3 s later) before the test's wait looked, and the wait then ran out.
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    const { page, view } = await openView('ui://vieneu/player.html', { text: '…' }, pending, () => held);
    // On a timeout, what the host and the view had said.
    const explain = async (err: unknown) => {
      t.log(await page.evaluate(() => (window as unknown as { hostLog: string[] }).hostLog), await view.$eval('#status', (el) => el.textContent), await view.$eval('#meta', (el) => el.textContent));
      throw err;
    };
    await view.waitForFunction(() => document.getElementById('status')?.textContent?.startsWith('Rendering'), undefined, { polling: 100 }).catch(explain);
    release();
    await view.waitForFunction(() => document.getElementById('status')?.textContent === 'Ready (MP3)', undefined, { timeout: 15_000, polling: 100 }).catch(explain);
    t.deepEqual((page as Page & { toolCalls?: string[] }).toolCalls, ['get_speech_status']);
    t.regex(await view.$eval('audio', (el) => (el as HTMLAudioElement).src), new RegExp(jobId));
    await page.close();
  });

  test('the capabilities view lists the tools and engines', async (t) => {
    const result = await mcp.callTool({ name: 'list_capabilities', arguments: {} });
    const { page, view } = await openView('ui://vieneu/capabilities.html', {}, result);
    await view.waitForFunction(() => document.querySelectorAll('#tools li').length > 0);
    const tools = await view.$$eval('#tools li', (items) => items.map((li) => li.textContent));
    t.is(tools.length, 6);
    t.true(tools.includes('text_to_speech — Text to speech (costs tokens)'));
    t.regex(await view.$eval('#engines', (el) => el.textContent ?? ''), /v4 — .*: 3 × 1\.3 tokens per character/);
    t.is(await view.$$eval('#not-offered li', (items) => items.length), 3);
    await screenshot(t, page, 'capabilities');
    await page.close();
  });

  test('the audiobook view shows a book\'s progress chapter by chapter, with players for finished chapters', async (t) => {
    // The shape get_audiobook returns (SPEC Audiobook); a finished chapter's link is real audio.
    const speech = await mcp.callTool({ name: 'text_to_speech', arguments: { text: 'Chương một. Ngày xửa ngày xưa.' } });
    const audioUrl = (speech.structuredContent as { audioUrl: string }).audioUrl;
    const book = {
      id: 'book_test', title: 'Truyện cổ tích', author: 'Dân gian', status: 'rendering', waitingReason: null,
      totals: { chapters: 3, completedChapters: 1, characters: 9000, estimatedTokens: 23400, tokensCharged: 11700, durationSeconds: 62 },
      chapters: [
        { index: 1, title: 'Tấm Cám', status: 'completed', audioUrl, audioFormat: 'mp3', progress: null },
        { index: 2, title: 'Sọ Dừa', status: 'rendering', audioUrl: null, progress: { done: 1, total: 3 } },
        { index: 3, title: 'Thạch Sanh', status: 'pending', audioUrl: null, progress: null },
      ],
    };
    const result = { content: [{ type: 'text', text: 'progress' }], structuredContent: { book } };
    const { page, view } = await openView('ui://vieneu/audiobook.html', { book_id: book.id }, result);
    await view.waitForFunction(() => document.querySelectorAll('#chapters li').length === 3);
    t.is(await view.$eval('#title', (el) => el.textContent), 'Truyện cổ tích — Dân gian');
    t.is(await view.$eval('#progress', (el) => (el as HTMLElement).style.width), '33%');
    t.deepEqual(await view.$$eval('#chapters li', (items) => items.map((li) => li.getAttribute('data-status'))), ['completed', 'rendering', 'pending']);
    t.regex(await view.$eval('#chapters li:nth-child(2)', (el) => el.textContent ?? ''), /Sọ Dừa — rendering \(1\/3\)/);
    const chapterAudio = await view.$eval('#chapters li:first-child audio', async (el) => {
      const audio = el as HTMLAudioElement;
      audio.preload = 'auto';
      audio.load();
      await new Promise((resolve) => audio.addEventListener('loadedmetadata', resolve, { once: true }));
      return audio.duration;
    });
    t.true(chapterAudio > 1, 'a finished chapter plays');
    await screenshot(t, page, 'audiobook');
    await page.close();
  });
}
