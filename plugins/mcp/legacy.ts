import type Koa from 'koa';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema, GetPromptRequestSchema, ListPromptsRequestSchema, ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema, ListToolsRequestSchema, ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { envelopeRefusal } from './envelope.ts';
import { INVALID_PARAMS, type McpServerDefinition } from './server.ts';
import type { ToolContext } from './tool.ts';

/**
 * 2025-era clients (protocol revisions 2024-11-05 to 2025-11-25, initialize
 * handshake): the SDK's Streamable HTTP transport in stateless mode, a new
 * server and transport per request, answering with JSON.
 *
 * The handlers let an McpProtocolError (unknown tool, prompt or resource, a
 * missing prompt argument) through as it is: the SDK sends a thrown error's
 * `code`, `message` and `data`, and an McpError's message already reads
 * "MCP error -32602: …", which the SDK's client prefixes a second time.
 */

/** The request schemas the SDK checks each call against, by method. */
const REQUEST_SCHEMAS = {
  'tools/call': CallToolRequestSchema,
  'prompts/get': GetPromptRequestSchema,
  'resources/read': ReadResourceRequestSchema,
} as const;

/**
 * A call whose params do not fit its method's schema, as -32602 Invalid
 * params naming the field. The SDK checks the same schema before any
 * handler runs, but answers a misfit with -32603 Internal error and a raw
 * validation dump, as if the server had failed.
 */
function invalidParams(body: unknown): { jsonrpc: '2.0'; id: string | number; error: { code: number; message: string } } | null {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return null;
  const { id, method } = body as { id?: unknown; method?: unknown };
  if (typeof method !== 'string' || !Object.hasOwn(REQUEST_SCHEMAS, method) || (typeof id !== 'string' && typeof id !== 'number')) return null;
  const checked = REQUEST_SCHEMAS[method as keyof typeof REQUEST_SCHEMAS].safeParse(body);
  if (checked.success) return null;
  const problems = checked.error.issues.map((issue) => `${issue.path.join('.') || 'the request'}: ${issue.message}`);
  return { jsonrpc: '2.0', id, error: { code: INVALID_PARAMS, message: `Invalid params for ${method}: ${problems.join('; ')}.` } };
}

export async function serveLegacy(ctx: Koa.Context, body: unknown, def: McpServerDefinition, toolContext: (signal: AbortSignal) => ToolContext): Promise<void> {
  const refused = envelopeRefusal(body, ctx.get('mcp-protocol-version') || undefined);
  if (refused) {
    ctx.status = refused.status;
    ctx.body = refused.body;
    return;
  }
  const misfit = invalidParams(body);
  if (misfit) {
    ctx.status = 200;
    ctx.body = misfit;
    return;
  }
  const server = new Server(
    { name: def.info.name, title: def.info.title, version: def.info.version },
    { capabilities: { tools: {}, prompts: {}, resources: {} }, instructions: def.instructions },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: def.listTools() as any }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => (await def.callTool(request.params.name, request.params.arguments, toolContext(extra.signal))) as any);
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: def.listPrompts() as any }));
  server.setRequestHandler(GetPromptRequestSchema, async (request) => def.getPrompt(request.params.name, request.params.arguments) as any);
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: def.listResources() as any }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: [] }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => def.readResource(request.params.uri) as any);

  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  ctx.respond = false;
  ctx.res.once('close', () => {
    void transport.close();
    void server.close();
  });
  await transport.handleRequest(ctx.req, ctx.res, body);
}
