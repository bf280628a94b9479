import { AsyncLocalStorage } from 'node:async_hooks';
import type http from 'node:http';
import { responseChecker, type ResponseChecker } from './openapi-check.ts';

/**
 * Every response a test receives from a test platform is checked against
 * that platform's API reference (test/helpers/openapi-check.ts): the test's
 * own calls (`p.api()`, and plain `fetch` to the platform, SDK clients
 * included, since they use the global fetch) fail at once with a message
 * naming the route and the status; calls the platform makes to itself
 * (the MCP server's tools) are recorded and fail the test when the platform
 * stops. Requests sent with http.request or raw sockets are not checked.
 */

interface Watched {
  checker: ResponseChecker;
  violations: string[];
}

const watched = new Map<string, Watched>();
/** set while this process's own servers handle a request: their outgoing fetches are not a test's */
const insideServer = new AsyncLocalStorage<true>();
const originalFetch = globalThis.fetch;
let installed = false;

export class UndocumentedResponse extends Error {
  constructor(problems: string[]) {
    super(`API reference: ${problems.join('\n')}`);
    this.name = 'UndocumentedResponse';
  }
}

function requestMethod(input: Parameters<typeof fetch>[0], init?: RequestInit): string {
  return (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\b/i;

async function inspect(entry: Watched, method: string, res: Response): Promise<string[]> {
  const url = new URL(res.url);
  const facts: Parameters<ResponseChecker['check']>[0] = { method, url, status: res.status, headers: res.headers };
  if (method !== 'HEAD' && JSON_TYPE.test(res.headers.get('content-type') ?? '') && entry.checker.operation(method, url.pathname)) {
    const text = await res.clone().text().catch(() => null);
    if (text === null) return [];
    try {
      facts.json = JSON.parse(text);
    } catch {
      facts.unparsable = text;
    }
  }
  return entry.checker.check(facts);
}

function install(): void {
  if (installed) return;
  installed = true;
  globalThis.fetch = async function checkedFetch(input, init) {
    const res = await originalFetch(input, init);
    const entry = res.url && !res.redirected ? watched.get(new URL(res.url).origin) : undefined;
    if (!entry) return res;
    const problems = await inspect(entry, requestMethod(input, init), res);
    if (problems.length === 0) return res;
    if (insideServer.getStore()) {
      entry.violations.push(...problems);
      return res;
    }
    throw new UndocumentedResponse(problems);
  };
}

/**
 * Starts checking the responses of a platform at `url`; the returned
 * function stops and hands back what its own outgoing calls recorded.
 */
export async function watchPlatform(url: string, server: http.Server | null): Promise<() => string[]> {
  install();
  const res = await originalFetch(`${url}/api/v1/openapi.json`);
  if (res.status !== 200) throw new Error(`the platform at ${url} serves no API reference: GET /api/v1/openapi.json answered ${res.status}`);
  const entry: Watched = { checker: responseChecker(await res.json()), violations: [] };
  const origin = new URL(url).origin;
  watched.set(origin, entry);
  const enter = () => insideServer.enterWith(true);
  server?.prependListener('request', enter);
  return () => {
    watched.delete(origin);
    server?.off('request', enter);
    return entry.violations;
  };
}
