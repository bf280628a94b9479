import type Koa from 'koa';
import { koaBody } from 'koa-body';
import { refusingBodyReadErrors } from '../../core/http/body-read.ts';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { AuthContext, KeyAuthenticator } from '../../core/http/auth.ts';
import { readPresentedKey } from '../../core/http/auth.ts';
import { toApiError } from '../../core/http/envelopes.ts';
import type { Documents } from '../../core/ports/documents.ts';
import type { SelfApi } from '../../core/self-api.ts';
import type { Logger } from '../../core/logger.ts';
import { createApiCaller, credentialHeaders } from './api.ts';
import { isModern, serveModern } from './modern.ts';
import { serveLegacy } from './legacy.ts';
import type { McpServerDefinition } from './server.ts';
import type { ToolContext } from './tool.ts';

/**
 * `{base_url}/mcp`: Streamable HTTP, stateless. Every request is
 * authenticated (an API key, or an OAuth access token through core's
 * credential verifiers) and its account must have an active plan; then a
 * request in the 2026-07-28 shape is served here and any other by the SDK.
 */

export interface McpHttpDeps {
  def: McpServerDefinition;
  keys: KeyAuthenticator;
  documents: Documents;
  selfApi: SelfApi;
  logger: Logger;
  /** browser origins allowed besides {base_url}'s own ('*': any) */
  allowedOrigins: string[];
  waitSeconds: number;
  pollMs: number;
}

const UNAUTHORIZED = -32001;
const FORBIDDEN = -32003;
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
/** what the SDK's transport answers its own 413 with */
const SERVER_ERROR = -32000;
const BODY_LIMIT_BYTES = 1024 * 1024;
/** The scope an access token needs here (SPEC Authentication 7: scope `tts`), named in the insufficient_scope challenge. */
const REQUIRED_SCOPE = 'tts';
const jsonBody = refusingBodyReadErrors(koaBody({ json: true, urlencoded: false, text: false, multipart: false, jsonLimit: BODY_LIMIT_BYTES, jsonStrict: true }));

export function protectedResourceMetadataUrl(baseUrl: string): string {
  return `${baseUrl}/.well-known/oauth-protected-resource`;
}

function answer(ctx: Koa.Context, status: number, body?: unknown): void {
  ctx.status = status;
  if (body !== undefined) ctx.body = body;
}

const rpcRefusal = (code: number, message: string) => ({ jsonrpc: '2.0', id: null, error: { code, message } });

/** A body that could not be read as a JSON-RPC message: too large (413), JSON but not an object or array, or not JSON. */
function unreadBody(err: unknown): { status: number; body: ReturnType<typeof rpcRefusal> } {
  if (toApiError(err).status === 413) {
    return { status: 413, body: rpcRefusal(SERVER_ERROR, `Payload Too Large: the body must not exceed ${BODY_LIMIT_BYTES} bytes (1 MB).`) };
  }
  // Strict parsing reads objects and arrays only: `5`, `"x"` or `null` is JSON, just not a request.
  if (/only supports object and array/.test(String((err as Error | undefined)?.message))) {
    return { status: 400, body: rpcRefusal(INVALID_REQUEST, 'Invalid Request: the body must be a JSON-RPC request object (or, for 2025-03-26 clients, a batch of them).') };
  }
  return { status: 400, body: rpcRefusal(PARSE_ERROR, 'Parse error: the body must be JSON.') };
}

async function hasActivePlan(documents: Documents, accountId: string): Promise<boolean> {
  const now = Date.now();
  return (await documents.grants.listActive(accountId)).some((g) => !g.expiresAt || Date.parse(g.expiresAt) > now);
}

export function mcpHttp(deps: McpHttpDeps): Koa.Middleware {
  const legacyVersions = [...SUPPORTED_PROTOCOL_VERSIONS];

  function corsAllowed(ctx: Koa.Context): boolean {
    const origin = ctx.get('origin');
    if (!origin) return true;
    const allowed = origin === new URL(deps.selfApi.publicBaseUrl()).origin || deps.allowedOrigins.includes('*') || deps.allowedOrigins.includes(origin);
    if (allowed) {
      ctx.set('Access-Control-Allow-Origin', origin);
      ctx.set('Vary', 'Origin');
      ctx.set('Access-Control-Expose-Headers', 'WWW-Authenticate, MCP-Protocol-Version, Mcp-Session-Id');
    }
    return allowed;
  }

  /** 401/403 before any MCP work, with the challenge MCP clients start the OAuth flow from. */
  async function authenticate(ctx: Koa.Context): Promise<AuthContext | null> {
    const metadata = `resource_metadata="${protectedResourceMetadataUrl(deps.selfApi.publicBaseUrl())}"`;
    let credential: string | null;
    try {
      credential = readPresentedKey(ctx.req.headersDistinct);
    } catch (err) {
      // Another scheme (Basic, DPoP) or a malformed header: still the challenge, which is where a client starts from (RFC 6750 3).
      const refusal = toApiError(err);
      if (refusal.status === 401) ctx.set('WWW-Authenticate', `Bearer error="invalid_request", ${metadata}`);
      answer(ctx, refusal.status, rpcRefusal(UNAUTHORIZED, String(refusal.messages)));
      return null;
    }
    if (!credential) {
      ctx.set('WWW-Authenticate', `Bearer ${metadata}`);
      answer(ctx, 401, rpcRefusal(UNAUTHORIZED, 'Sign in: send an OAuth access token or an API key (Authorization: Bearer …).'));
      return null;
    }
    let auth: AuthContext;
    try {
      auth = await deps.keys.authenticate(credential);
    } catch (err) {
      const refusal = toApiError(err, deps.logger);
      const message = String(refusal.messages);
      const description = `error_description="${message.replace(/"/g, "'")}"`;
      if (refusal.status === 401) ctx.set('WWW-Authenticate', `Bearer error="invalid_token", ${description}, ${metadata}`);
      // RFC 6750 3.1 and MCP's scope challenge: a client re-authorizes for the scope it names only when this header is there.
      if (refusal.code === 'INSUFFICIENT_SCOPE') ctx.set('WWW-Authenticate', `Bearer error="insufficient_scope", scope="${REQUIRED_SCOPE}", ${description}, ${metadata}`);
      answer(ctx, refusal.status, rpcRefusal(refusal.status === 401 ? UNAUTHORIZED : FORBIDDEN, message));
      return null;
    }
    if (!(await hasActivePlan(deps.documents, auth.accountId))) {
      answer(ctx, 403, rpcRefusal(FORBIDDEN, 'An account with an active plan is required to connect. Add or renew a plan, then connect again.'));
      return null;
    }
    return auth;
  }

  return async (ctx) => {
    if (ctx.path !== '/mcp' && ctx.path !== '/mcp/') return answer(ctx, 404, rpcRefusal(-32601, `No MCP endpoint at ${ctx.path}; use /mcp.`));
    if (!corsAllowed(ctx)) return answer(ctx, 403, rpcRefusal(FORBIDDEN, `Origin ${ctx.get('origin')} is not allowed.`));
    if (ctx.method === 'OPTIONS') {
      ctx.set('Access-Control-Allow-Methods', 'POST, OPTIONS');
      ctx.set('Access-Control-Allow-Headers', 'Authorization, X-API-Key, Content-Type, Accept, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Session-Id, Last-Event-ID');
      ctx.set('Access-Control-Max-Age', '600');
      return answer(ctx, 204);
    }
    if (ctx.method !== 'POST') {
      ctx.set('Allow', 'POST');
      return answer(ctx, 405, rpcRefusal(-32000, 'This stateless server answers POST only (no GET stream, no sessions to delete).'));
    }
    const auth = await authenticate(ctx);
    if (!auth) return;
    try {
      await jsonBody(ctx, async () => {});
    } catch (err) {
      const refused = unreadBody(err);
      return answer(ctx, refused.status, refused.body);
    }
    const body = ctx.request.body;
    // The tools stop waiting when the client goes away.
    const gone = new AbortController();
    ctx.res.once('close', () => {
      if (!ctx.res.writableFinished) gone.abort();
    });
    const toolContext = (signal?: AbortSignal): ToolContext => {
      const combined = signal ? AbortSignal.any([signal, gone.signal]) : gone.signal;
      return {
        api: createApiCaller(deps.selfApi, credentialHeaders(ctx.headers), combined, ctx.ip), waitSeconds: deps.waitSeconds, pollMs: deps.pollMs, signal: combined,
        testKey: auth.keyKind === 'test',
      };
    };
    const headers = ctx.headers as Record<string, string | undefined>;
    if (isModern(body, headers['mcp-protocol-version'])) {
      const out = await serveModern(body, headers, deps.def, () => toolContext(), legacyVersions);
      ctx.set('MCP-Protocol-Version', headers['mcp-protocol-version'] ?? '');
      return answer(ctx, out.status, out.body);
    }
    await serveLegacy(ctx, body, deps.def, (signal) => toolContext(signal));
  };
}

/** RFC 9728 metadata of the MCP endpoint, at the root and at the path-suffixed address. */
export function protectedResourceMetadata(selfApi: SelfApi): Koa.Middleware {
  return async (ctx) => {
    const base = selfApi.publicBaseUrl();
    if (ctx.path !== '/.well-known/oauth-protected-resource' && ctx.path !== '/.well-known/oauth-protected-resource/mcp') return;
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD' && ctx.method !== 'OPTIONS') return;
    ctx.set('Access-Control-Allow-Origin', '*');
    if (ctx.method === 'OPTIONS') return answer(ctx, 204);
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = {
      resource: `${base}/mcp`,
      authorization_servers: [base],
      scopes_supported: ['tts', 'offline_access'],
      bearer_methods_supported: ['header'],
      resource_name: 'VieNeu text-to-speech MCP server',
      resource_documentation: `${base}/docs`,
    };
  };
}
