import type Joi from 'joi';
import type { HeaderDoc, MountDefinition, OperationDoc, RouteDefinition } from '../../plugin.ts';
import { API_PREFIX } from '../app.ts';
import { toJsonSchema, type JsonSchema } from './json-schema.ts';
import { assembleResponses, coreAnswersOf, envelopeComponents, HEADER_COMPONENTS } from './responses.ts';

/**
 * The API reference as an OpenAPI 3.1 document, built from the routes and
 * mounts the loaded plugins registered (core/kernel/wiring.ts): the same
 * joi schemas core validates requests with, converted by joi-to-json, and
 * the responses each route documents plus those core's phases may give.
 * A plugin that is loaded appears; one that is not, does not.
 */

export const INTERFACE_VERSION = '1.0';

export interface ReferenceInput {
  routes: Array<RouteDefinition & { plugin: string }>;
  mounts: Array<MountDefinition & { plugin: string }>;
  plugins: Array<{ id: string; description: string }>;
  /** `{base_url}` */
  baseUrl: string;
}

/** `/tts/:jobId` -> `/tts/{jobId}` and the parameter names. */
export function openApiPath(koaPath: string): { path: string; params: string[] } {
  const params: string[] = [];
  const path = koaPath.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => {
    params.push(name);
    return `{${name}}`;
  });
  return { path, params };
}

function parameters(input: { pathParams: string[]; query?: Joi.Schema; headers?: Record<string, HeaderDoc> }): JsonSchema[] {
  const out: JsonSchema[] = input.pathParams.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
  if (input.query) {
    const schema = toJsonSchema(input.query);
    const required = new Set((schema.required as string[] | undefined) ?? []);
    for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) {
      const { description, ...rest } = property;
      out.push({ name, in: 'query', required: required.has(name), ...(description ? { description } : {}), schema: rest });
    }
  }
  for (const [name, doc] of Object.entries(input.headers ?? {})) {
    out.push({ name, in: 'header', required: Boolean(doc.required), description: doc.description, schema: doc.schema ? toJsonSchema(doc.schema) : { type: 'string' } });
  }
  return out;
}

function requestBody(schema: JsonSchema, contentTypes: string[]): JsonSchema {
  const example = Array.isArray(schema.examples) ? schema.examples[0] : undefined;
  return {
    required: true,
    content: Object.fromEntries(contentTypes.map((type) => [type, { schema, ...(example !== undefined && type === 'application/json' ? { example } : {}) }])),
  };
}

function security(auth: RouteDefinition['auth'], extraKeyHeader: string | undefined, hasOAuth: boolean): JsonSchema[] {
  if (auth === 'none') return [];
  const ways: JsonSchema[] = [{ bearerAuth: [] }, { apiKeyHeader: [] }];
  if (extraKeyHeader?.toLowerCase() === 'x-agent-secret') ways.push({ agentSecret: [] });
  if (hasOAuth) ways.push({ oauth2: ['tts'] });
  if (auth === 'optional') ways.push({});
  return ways;
}

function routeOperation(def: RouteDefinition & { plugin: string }, params: string[], hasOAuth: boolean): JsonSchema {
  const ways = security(def.auth, def.extraKeyHeader, hasOAuth);
  // An operation that takes OAuth access tokens documents their verifier's refusals (its 401 and 403), whatever the route answers itself.
  const core = { ...coreAnswersOf(def), oauth: ways.some((way) => 'oauth2' in way) };
  const responses = assembleResponses(def.responses ?? {}, core);
  const op: JsonSchema = {
    operationId: def.name,
    tags: [def.plugin],
    summary: def.summary ?? def.name,
    ...(def.description ? { description: def.description } : {}),
    security: ways,
    'x-plugin': def.plugin,
    'x-rate-limited': core.rateLimited,
  };
  const list = parameters({ pathParams: params, query: def.request?.query, headers: def.requestHeaders });
  if (list.length) op.parameters = list;
  if (def.request?.body) op.requestBody = requestBody(toJsonSchema(def.request.body), ['application/json']);
  else if (def.form) op.requestBody = requestBody(toJsonSchema(def.form), ['multipart/form-data']);
  op.responses = responses;
  return op;
}

function mountOperation(doc: OperationDoc, plugin: string, params: string[]): JsonSchema {
  const envelope = doc.envelope ?? 'none';
  const op: JsonSchema = {
    operationId: doc.name,
    tags: [plugin],
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    security: (doc.security ?? []).map((name) => ({ [name]: [] })),
    'x-plugin': plugin,
  };
  const list = parameters({ pathParams: params, query: doc.request?.query });
  if (list.length) op.parameters = list;
  if (doc.request?.body) {
    const types = doc.request.bodyContentType ?? 'application/json';
    op.requestBody = requestBody(toJsonSchema(doc.request.body), Array.isArray(types) ? types : [types]);
  }
  op.responses = assembleResponses(doc.responses, { envelope, auth: false, validated: false, jsonBody: false, multipart: false, rateLimited: false, edge: false });
  return op;
}

const SECURITY_SCHEMES: Record<string, JsonSchema> = {
  bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key (`vn_sk_…` live, `vn_test_…` test) as `Authorization: Bearer <API_KEY>`, or an OAuth access token. Send the key in one header only.' },
  apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key as `X-API-Key: <API_KEY>`.' },
  agentSecret: { type: 'apiKey', in: 'header', name: 'X-AGENT-SECRET', description: 'An API key in the header voice-agent platforms forward their server secret in (`POST /agent/speech` only).' },
};

/** OAuth flow URLs given as paths (`/oauth/token`) become absolute on `{base_url}`. */
function absoluteUrls(value: unknown, baseUrl: string, key = ''): unknown {
  if (typeof value === 'string') return key.endsWith('Url') && value.startsWith('/') ? baseUrl + value : value;
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, absoluteUrls(v, baseUrl, k)]));
}

export function buildOpenApiDocument(input: ReferenceInput): JsonSchema {
  const securitySchemes: Record<string, JsonSchema> = { ...SECURITY_SCHEMES };
  for (const mount of input.mounts) Object.assign(securitySchemes, absoluteUrls(mount.securitySchemes ?? {}, input.baseUrl));
  const hasOAuth = 'oauth2' in securitySchemes;
  const paths: Record<string, Record<string, JsonSchema>> = {};
  const ids = new Map<string, string>();
  const add = (method: string, koaPath: string, build: (params: string[]) => JsonSchema) => {
    const { path, params } = openApiPath(koaPath);
    const op = build(params);
    const id = op.operationId as string;
    const other = ids.get(id);
    if (other) throw new Error(`API reference: operationId "${id}" is used by ${other} and ${method} ${path}; route names must be unique`);
    ids.set(id, `${method} ${path}`);
    (paths[path] ??= {})[method.toLowerCase()] = op;
  };
  for (const def of input.routes) add(def.method, API_PREFIX + def.path, (params) => routeOperation(def, params, hasOAuth));
  for (const mount of input.mounts) for (const doc of mount.operations ?? []) add(doc.method, doc.path, (params) => mountOperation(doc, mount.plugin, params));

  const used = new Set(Object.values(paths).flatMap((ops) => Object.values(ops).map((op) => (op.tags as string[])[0])));
  return {
    openapi: '3.1.0',
    info: {
      title: 'VieNeu Text-to-Speech API',
      version: INTERFACE_VERSION,
      description: 'Vietnamese text-to-speech: synchronous, streamed and queued speech, dialogue, dubbing, webhooks and usage. '
        + 'Every route lives under `/api/v1`. Errors use the native envelope (`NativeError`), except `POST /api/v1/audio/speech`, '
        + 'which answers in the envelope of the widely used speech endpoint it is compatible with (`CompatError`). '
        + 'A 429 with X-RateLimit-* headers comes from the application and counts against the key; a bare 429 or 503 with an HTML body '
        + 'comes from the edge and counts against the source address.',
    },
    servers: [{ url: input.baseUrl, description: '{base_url}' }],
    tags: input.plugins.filter((p) => used.has(p.id)).map((p) => ({ name: p.id, description: p.description })),
    paths,
    components: {
      schemas: { NativeError: envelopeComponents().native, CompatError: envelopeComponents().compat },
      headers: HEADER_COMPONENTS,
      securitySchemes,
    },
  };
}
