import type Joi from 'joi';
import * as joiToJson from 'joi-to-json';

// CommonJS (`module.exports = parse`), which ES modules see as the default export.
const parse = (joiToJson as unknown as { default: typeof joiToJson.parse }).default;

/** A JSON Schema (draft 2020-12, as OpenAPI 3.1 uses it). */
export type JsonSchema = Record<string, unknown>;

/**
 * Meta key for JSON Schema keywords a joi schema cannot state itself,
 * because a custom rule enforces them (an enum checked in `custom()` so
 * that its message can name unsupported values): `.meta({ [SCHEMA_HINT]: {
 * enum: [...] } })`. The converter keeps `x-` keys; they are merged here.
 */
export const SCHEMA_HINT = 'x-json-schema';

function mergeHints(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(mergeHints);
  if (!node || typeof node !== 'object') return node;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key !== SCHEMA_HINT) out[key] = mergeHints(value);
  }
  const hint = (node as JsonSchema)[SCHEMA_HINT];
  if (hint && typeof hint === 'object') Object.assign(out, hint);
  return out;
}

/**
 * The JSON Schema of a joi schema: joi-to-json's OpenAPI 3.1 output (it
 * reads joi's own `describe()`, so the reference says what the server
 * validates), plus the hints above.
 */
export function toJsonSchema(schema: Joi.Schema): JsonSchema {
  return mergeHints(parse(schema as unknown as Parameters<typeof parse>[0], 'open-api-3.1')) as JsonSchema;
}
