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
  /** the caller connected with a test key (vn_test_): tells its word cap apart where a route's envelope has no code */
  testKey?: boolean;
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
  /** the routes' names of its arguments (`afterSegment`) and its own (`after_segment`): refusal texts name the argument the model sends */
  routeTerms?: Record<string, string>;
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
const ID_PATTERN = /^[A-Za-z0-9_-]+$/;
const ID_MAX = 200;
export const idArgument = (what: string) => Joi.string().trim().min(1).max(ID_MAX).pattern(ID_PATTERN).messages({
  'string.pattern.base': `{{#label}} must be ${what} as a tool returned it (letters, digits, "_" and "-")`,
});
/** The JSON Schema of an id argument: what idArgument enforces, so a client can check it first. */
export const idSchema = (description: string) => ({ type: 'string', minLength: 1, maxLength: ID_MAX, pattern: ID_PATTERN.source, description });

/** JSON Schema helpers: an optional argument may also be null. */
export const nullable = (schema: Record<string, unknown>) => ({ ...schema, type: [schema.type as string, 'null'] });

/** null means "not given" for every optional argument. */
function dropNulls(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).filter(([, v]) => v !== null));
}

/**
 * The problems of a call's arguments. Joi's converting pass trims strings
 * and fills defaults, but it would also read "5" as 5 and "true" as true;
 * an argument of another JSON type than its schema's is refused instead, as
 * the advertised schema says. The strict pass finds those (`*.base`), the
 * converting one the rest.
 */
function argumentProblems(schema: Joi.ObjectSchema, given: Record<string, unknown>): { value: any; problems: string[] } {
  const strict = schema.validate(given, { abortEarly: false, convert: false });
  const wrongType = (strict.error?.details ?? []).filter((d) => d.type.endsWith('.base'));
  const { value, error } = schema.validate(given, { abortEarly: false, convert: true });
  const typed = new Set(wrongType.map((d) => d.path.join('.')));
  const rest = (error?.details ?? []).filter((d) => !typed.has(d.path.join('.')));
  return { value, problems: [...wrongType, ...rest].map((d) => d.message) };
}

/** A route's name for an argument (a whole word, as in `Send afterSegment 2`) becomes the tool's. */
function inToolTerms(message: string, terms: Record<string, string> | undefined): string {
  if (!terms) return message;
  return Object.entries(terms).reduce((text, [route, tool]) => text.replace(new RegExp(`\\b${route}\\b`, 'g'), tool), message);
}

export async function invokeTool(tool: ToolDefinition, rawArgs: unknown, ctx: ToolContext): Promise<CallToolResult> {
  const given = rawArgs && typeof rawArgs === 'object' && !Array.isArray(rawArgs) ? dropNulls(rawArgs as Record<string, unknown>) : {};
  const { value, problems } = argumentProblems(tool.args, given);
  if (problems.length) return toolError(`Invalid arguments for ${tool.name}: ${problems.join('; ')}. Fix them and call again.`, { status: 400, code: 'INVALID_ARGUMENTS' });
  try {
    const out = await tool.run(value, ctx);
    return { content: [{ type: 'text', text: out.text }], structuredContent: out.structured };
  } catch (err) {
    if (err instanceof ToolError) return toolError(inToolTerms(err.message, tool.routeTerms), err.details);
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
