import Joi from 'joi';
import { ToolError, type ApiCaller } from './api.ts';

/**
 * One MCP tool: its advertised JSON Schema (optional arguments accept
 * null), the joi schema that checks a call, and what it does. A refusal
 * or a bad argument comes back as a tool error (`isError: true`) whose text
 * says what to change, so a model can correct itself.
 */

export interface ToolContext {
  api: ApiCaller;
  /** how long `text_to_speech` waits for a long text's job */
  waitSeconds: number;
  /** how often jobs are polled */
  pollMs: number;
  signal?: AbortSignal;
}

export interface ToolOutput {
  text: string;
  structured: Record<string, unknown>;
}

export interface ToolDefinition<A = any> {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  args: Joi.ObjectSchema<A>;
  /** costs tokens */
  paid: boolean;
  readOnly: boolean;
  /** the MCP Apps view that renders its result */
  ui?: string;
  run(args: A, ctx: ToolContext): Promise<ToolOutput>;
}

export interface CallToolResult {
  [key: string]: unknown;
  content: Array<{ type: 'text'; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/**
 * An id argument (a job's, a book's): printable ASCII, as the tools return
 * them. Anything else (a lone surrogate made encodeURIComponent throw) is
 * refused as a bad argument instead of failing the call.
 */
// Ids are letters, digits, "_" and "-": "." or ".." would otherwise be read as path segments of the route the tool calls.
export const idArgument = (what: string) => Joi.string().trim().min(1).max(200).pattern(/^[A-Za-z0-9_-]+$/).messages({
  'string.pattern.base': `{{#label}} must be ${what} as a tool returned it (letters, digits, "_" and "-")`,
});

/** JSON Schema helpers: an optional argument may also be null. */
export const nullable = (schema: Record<string, unknown>) => ({ ...schema, type: [schema.type as string, 'null'] });

/** null means "not given" for every optional argument. */
function dropNulls(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).filter(([, v]) => v !== null));
}

export async function invokeTool(tool: ToolDefinition, rawArgs: unknown, ctx: ToolContext): Promise<CallToolResult> {
  const given = rawArgs && typeof rawArgs === 'object' && !Array.isArray(rawArgs) ? dropNulls(rawArgs as Record<string, unknown>) : {};
  const { value, error } = tool.args.validate(given, { abortEarly: false, convert: true });
  if (error) return toolError(`Invalid arguments for ${tool.name}: ${error.details.map((d) => d.message).join('; ')}. Fix them and call again.`, { status: 400, code: 'INVALID_ARGUMENTS' });
  try {
    const out = await tool.run(value, ctx);
    return { content: [{ type: 'text', text: out.text }], structuredContent: out.structured };
  } catch (err) {
    if (err instanceof ToolError) return toolError(err.message, err.details);
    throw err;
  }
}

export function toolError(message: string, details: Record<string, unknown>): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }], structuredContent: { error: { ...details, message } } };
}

/** The tool as `tools/list` shows it. */
export function describeTool(tool: ToolDefinition): Record<string, unknown> {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description + (tool.paid ? ' Costs tokens from the user\'s plan.' : ' Free.'),
    inputSchema: tool.inputSchema,
    annotations: { title: tool.title, readOnlyHint: tool.readOnly, destructiveHint: false, openWorldHint: false },
    ...(tool.ui ? { _meta: { ui: { resourceUri: tool.ui } } } : {}),
  };
}
