import type { SelfApi } from '../../core/self-api.ts';

/**
 * The MCP tools call the platform's own /api/v1 routes over loopback with the
 * caller's credential (API key or OAuth access token), so billing, usage
 * events, rate limits and refusals are those of the routes by construction.
 * A refusal becomes a ToolError whose text tells a model what to do next.
 */

export class ToolError extends Error {
  /**
   * `param`: the request field a route's compatible envelope named (`input`), to tell its refusals apart;
   * not shown to the model, which knows the tool's argument names only
   */
  constructor(message: string, readonly details: { status: number; code?: string | null; [key: string]: unknown }, readonly param: string | null = null) {
    super(message);
    this.name = 'ToolError';
  }
}

export interface ApiAnswer<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface ApiCaller {
  /** a JSON route; non-2xx answers throw ToolError */
  json<T = any>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiAnswer<T>>;
  /** a route whose answer is not JSON (audio); non-2xx answers throw ToolError */
  raw(method: 'POST', path: string, body: unknown): Promise<Response>;
}

/** The credential headers of the MCP request, forwarded as they came (one of them, core refuses both). */
export function credentialHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ['authorization', 'x-api-key']) {
    const value = headers[name];
    if (typeof value === 'string' && value) out[name] = value;
  }
  return out;
}

/** Calls the API with the MCP client's credential, counted against the MCP client's address (`clientAddress`). */
export function createApiCaller(selfApi: SelfApi, credentials: Record<string, string>, signal?: AbortSignal, clientAddress?: string): ApiCaller {
  async function send(method: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
    const init: RequestInit = { method, headers: { ...credentials, ...headers }, signal };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] = 'application/json';
    }
    let res: Response;
    try {
      res = await selfApi.fetch(`/api/v1${path}`, init, clientAddress);
    } catch (err) {
      if (signal?.aborted) throw new ToolError('The request was cancelled.', { status: 499 });
      throw new ToolError(`The service could not be reached (${(err as Error).message}). Try again in a moment.`, { status: 503 });
    }
    if (res.status >= 400) {
      const text = await res.text();
      let parsed: unknown = null;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = { message: text.slice(0, 300) };
      }
      throw refusal(res.status, parsed as Record<string, any>, res.headers);
    }
    return res;
  }
  return {
    async json(method, path, body, headers) {
      const res = await send(method, path, body, headers);
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
    },
    raw: (method, path, body) => send(method, path, body),
  };
}

/** Advice in the routes' messages that names a REST route, in the tools' terms: a model can call tools, not routes. */
const ROUTE_ADVICE: Array<[RegExp, string]> = [
  // "Unknown voice …. List voices with GET /voices?engine=v4.": the next step says to call list_voices.
  [/\s*List voices with GET \/voices\S*/g, ''],
  [/POST \/audiobooks\/\{bookId\}\/chapters/g, 'add_audiobook_chapter'],
];

/** What went wrong, in words a model can act on, from the native or the compatible error envelope. */
export function refusal(status: number, body: Record<string, any>, headers?: Headers): ToolError {
  const compat = body?.error && typeof body.error === 'object' ? body.error : null;
  const raw = compat ? compat.message : body?.message;
  const message = ROUTE_ADVICE.reduce((text, [route, tool]) => text.replace(route, tool), Array.isArray(raw) ? raw.join('; ') : String(raw ?? `HTTP ${status}`));
  const code: string | null = body?.code ?? compat?.code ?? null;
  const retryAfter = body?.retryAfterSeconds ?? (headers?.get('retry-after') ? Number(headers.get('retry-after')) : undefined);
  const param: string | null = compat?.param ?? null;
  const details = { status, code, message, retryAfterSeconds: retryAfter, resetAt: body?.resetAt, remaining: body?.remaining, required: body?.required };
  return new ToolError(`${message} ${nextStep(status, code, param, details)}`.trim(), details, param);
}

function nextStep(status: number, code: string | null, param: string | null, d: { retryAfterSeconds?: number; resetAt?: string; remaining?: number; required?: number }): string {
  switch (code) {
    case 'GRANT_TOKENS_EXHAUSTED':
    case 'insufficient_tokens':
      return `The plan has ${d.remaining ?? 'too few'} tokens left and this needs ${d.required ?? 'more'}. Tell the user to top up their plan, or use a shorter text.`;
    case 'GRANT_DAILY_LIMIT':
    case 'GRANT_WEEKLY_LIMIT':
      return `The plan's ${code === 'GRANT_DAILY_LIMIT' ? 'daily' : 'weekly'} cap is spent until ${d.resetAt}. Wait until then, or use a shorter text (${d.remaining ?? 0} tokens left now).`;
    case 'GRANT_EXPIRED':
    case 'GRANT_INACTIVE':
      return 'The plan can no longer pay. Tell the user to renew or add a plan; retrying will not help.';
    case 'TEST_KEY_WORD_LIMIT':
      return 'A test key reads at most 100 words per request: split the text, or connect with a live key.';
    case 'live_key_required':
      return 'Tell the user to connect with a live key; no argument changes this.';
    case 'no_chapters':
      return 'Then call start_audiobook again.';
    case 'too_many_chapters':
      return 'Put the rest in another book (create_audiobook).';
    case 'chapter_over_plan_limit':
      return 'Split the chapter into smaller chapters (see chapterCharsMax in get_audiobook).';
    case 'segment_mismatch':
      return 'Call get_audiobook to check that these segments are not in the chapter already; if not, send after_segment with the chapter\'s count.';
    case 'duplicate_segments':
    case 'duplicate_chapter':
      return 'This text was already added; do not send it again. Call get_audiobook to check the chapters.';
    default:
  }
  if (status === 401) return 'The connection is no longer signed in: reconnect the VieNeu server (sign in again).';
  if (status === 404) return 'Check the id: it is unknown or belongs to another account.';
  if (status === 429) return `Too many requests right now: retry after ${d.retryAfterSeconds ?? 15} seconds.`;
  if (status === 400 && (param === 'voice' || param === 'voiceId' || /voice/i.test(String(code ?? '')))) return 'Call list_voices to pick a valid voice id.';
  if (status === 402 || status === 403) return 'The plan cannot pay for this; tell the user.';
  if (status === 400 || status === 422) return 'Fix the arguments and try again.';
  if (status >= 500) return 'The service failed (failed synthesis is refunded); try again shortly.';
  return '';
}
