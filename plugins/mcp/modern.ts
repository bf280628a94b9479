import { INVALID_PARAMS, McpProtocolError, type McpServerDefinition } from './server.ts';
import type { ToolContext } from './tool.ts';

/**
 * Protocol revision 2026-07-28 over Streamable HTTP, written here because
 * the SDK (1.32) speaks revisions up to 2025-11-25 only: no initialize
 * handshake, every request carries its version and client capabilities in
 * `_meta` and its method (and name) in headers; `server/discover`; every
 * result has `resultType` and the server's identity; list and read results
 * carry cache hints. A request without modern `_meta` goes to the SDK.
 */

export const MODERN_VERSIONS = ['2026-07-28'];
export const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

const HEADER_MISMATCH = -32020;
const UNSUPPORTED_VERSION = -32022;
const METHOD_NOT_FOUND = -32601;
const INVALID_REQUEST = -32600;
/** the list results do not vary per caller or per request */
const LIST_CACHE = { ttlMs: 300_000, cacheScope: 'public' as const };

export interface HttpAnswer {
  status: number;
  body?: unknown;
}

type RpcRequest = { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: Record<string, any> };

/** Does this request speak a modern revision (its `_meta` or its header says so)? */
export function isModern(body: unknown, protocolHeader: string | undefined): boolean {
  const meta = (body as RpcRequest | null)?.params?._meta;
  if (meta && typeof meta === 'object' && META_VERSION in meta) return true;
  return protocolHeader !== undefined && MODERN_VERSIONS.includes(protocolHeader);
}

/** `=?base64?…?=` values of Mcp-Name (SPEC Streamable HTTP, Value Encoding). */
export function decodeHeaderValue(value: string): string {
  const match = /^=\?base64\?([A-Za-z0-9+/=]*)\?=$/.exec(value);
  return match ? Buffer.from(match[1], 'base64').toString('utf8') : value;
}

const rpcError = (status: number, id: unknown, code: number, message: string, data?: unknown): HttpAnswer => ({
  status, body: { jsonrpc: '2.0', id: id ?? null, error: { code, message, ...(data === undefined ? {} : { data }) } },
});

export async function serveModern(
  body: unknown,
  headers: Record<string, string | undefined>,
  def: McpServerDefinition,
  toolContext: () => ToolContext,
  legacyVersions: string[],
): Promise<HttpAnswer> {
  const request = body as RpcRequest | null;
  // JSON-RPC 2.0: an id is a string, a number or null; any other is answered with a null id.
  const validId = (value: unknown) => value === undefined || value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
  if (!request || typeof request !== 'object' || Array.isArray(request) || request.jsonrpc !== '2.0' || typeof request.method !== 'string' || !validId(request.id)) {
    return rpcError(400, request && validId(request.id) ? request.id : null, INVALID_REQUEST, 'The body must be one JSON-RPC 2.0 request (its id a string, a number or null).');
  }
  const { id, method } = request;
  const params = request.params ?? {};
  const version = params._meta?.[META_VERSION];
  const header = headers['mcp-protocol-version'];
  if (typeof version !== 'string') return rpcError(400, id, HEADER_MISMATCH, `Header mismatch: MCP-Protocol-Version is ${header} but params._meta has no ${META_VERSION}.`);
  if (!MODERN_VERSIONS.includes(version)) {
    return rpcError(400, id, UNSUPPORTED_VERSION, 'Unsupported protocol version', { supported: [...MODERN_VERSIONS, ...legacyVersions], requested: version });
  }
  if (header !== version) return rpcError(400, id, HEADER_MISMATCH, `Header mismatch: MCP-Protocol-Version header ${header ?? '(missing)'} does not match body value ${version}.`);
  if (headers['mcp-method'] !== method) return rpcError(400, id, HEADER_MISMATCH, `Header mismatch: Mcp-Method header ${headers['mcp-method'] ?? '(missing)'} does not match body value ${method}.`);
  const named = method === 'tools/call' || method === 'prompts/get' ? params.name : method === 'resources/read' ? params.uri : undefined;
  if (named !== undefined) {
    const nameHeader = headers['mcp-name'];
    if (nameHeader === undefined || decodeHeaderValue(nameHeader) !== named) {
      return rpcError(400, id, HEADER_MISMATCH, `Header mismatch: Mcp-Name header ${nameHeader ?? '(missing)'} does not match body value ${String(named)}.`);
    }
  }
  if (id === undefined) return { status: 202 }; // a notification: nothing in this revision needs one

  let result: Record<string, unknown>;
  try {
    switch (method) {
      case 'server/discover':
        result = {
          supportedVersions: [...MODERN_VERSIONS, ...legacyVersions],
          capabilities: { tools: {}, prompts: {}, resources: {}, extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } },
          serverInfo: def.info, instructions: def.instructions, ...LIST_CACHE,
        };
        break;
      case 'tools/list':
        result = { tools: def.listTools(), ...LIST_CACHE };
        break;
      case 'tools/call':
        if (typeof params.name !== 'string') throw new McpProtocolError(INVALID_PARAMS, 'params.name must be the tool name.');
        if (params.arguments !== undefined && (params.arguments === null || typeof params.arguments !== 'object' || Array.isArray(params.arguments))) {
          throw new McpProtocolError(INVALID_PARAMS, 'params.arguments must be an object of the tool\'s arguments.');
        }
        result = await def.callTool(params.name, params.arguments, toolContext());
        break;
      case 'prompts/list':
        result = { prompts: def.listPrompts(), ...LIST_CACHE };
        break;
      case 'prompts/get':
        if (typeof params.name !== 'string') throw new McpProtocolError(INVALID_PARAMS, 'params.name must be the prompt name.');
        result = def.getPrompt(params.name, params.arguments);
        break;
      case 'resources/list':
        result = { resources: def.listResources(), ...LIST_CACHE };
        break;
      case 'resources/templates/list':
        result = { resourceTemplates: [], ...LIST_CACHE };
        break;
      case 'resources/read':
        result = { ...def.readResource(String(params.uri)), ...LIST_CACHE };
        break;
      default:
        return rpcError(404, id, METHOD_NOT_FOUND, `Method not found: ${method}`);
    }
  } catch (err) {
    if (err instanceof McpProtocolError) return rpcError(200, id, err.code, err.message, err.data);
    throw err;
  }
  const meta = { ...((result._meta as Record<string, unknown> | undefined) ?? {}), [META_SERVER_INFO]: def.info };
  return { status: 200, body: { jsonrpc: '2.0', id, result: { ...result, resultType: 'complete', _meta: meta } } };
}
