import { existsSync, mkdirSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';

/**
 * Headless Chromium for the console's browser tests: Debian's `chromium`
 * driven by playwright-core, the console's front end freshly built by Vite
 * (so the test runs today's sources), screenshots in test-output/, and a
 * record of CSP violations and page errors each test can assert is empty.
 */

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const OUTPUT = path.resolve('test-output');

/** One line saying why there is no browser; null when there is one. */
export function chromiumMissing(): string | null {
  return existsSync(CHROMIUM) ? null : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;
}

/** Builds plugins/console/web into a fresh directory with the project's Vite config. */
export async function buildConsole(): Promise<string> {
  const { build } = await import('vite');
  const outDir = mkdtempSync(path.join(tmpdir(), 'console-web-'));
  await build({ configFile: path.resolve('plugins/console/vite.config.ts'), logLevel: 'warn', build: { outDir, emptyOutDir: true } });
  return outDir;
}

export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--autoplay-policy=no-user-gesture-required'],
  });
}

export interface Watched {
  /** CSP violations the page reported (directive and blocked address) */
  csp: string[];
  /** uncaught errors and console errors */
  errors: string[];
}

/** A browser context whose pages report CSP violations and errors into `watched`. */
export async function watchedContext(browser: Browser, options: Parameters<Browser['newContext']>[0] = {}): Promise<{ context: BrowserContext; watched: Watched }> {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, locale: 'en-GB', timezoneId: 'Asia/Ho_Chi_Minh', acceptDownloads: true, ...options });
  const watched: Watched = { csp: [], errors: [] };
  await context.exposeBinding('reportCspViolation', (_source, line: string) => void watched.csp.push(line));
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      (window as unknown as { reportCspViolation(line: string): void }).reportCspViolation(`${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  context.on('page', (page) => watchPage(page, watched));
  return { context, watched };
}

function watchPage(page: Page, watched: Watched): void {
  page.on('pageerror', (err) => watched.errors.push(`pageerror: ${err.message}`));
  page.on('console', (message) => {
    // A refused request is logged by the browser as an error; the tests provoke some on purpose.
    if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) watched.errors.push(`console: ${message.text()}`);
  });
}

export async function screenshot(t: { log(...v: unknown[]): void }, page: Page, name: string): Promise<string> {
  mkdirSync(OUTPUT, { recursive: true });
  const file = path.join(OUTPUT, `console-${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  t.log(`screenshot: ${file} (${statSync(file).size} bytes)`);
  return file;
}
