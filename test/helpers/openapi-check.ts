import { createHash } from 'node:crypto';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import * as ajvFormats from 'ajv-formats';

/**
 * Checks responses against the API reference (GET /api/v1/openapi.json):
 * status, the documented headers, the content type and, for JSON, the body.
 * One compiled validator per operation, status and media type, kept for the
 * whole test process and shared by every platform serving the same document.
 */

type Json = Record<string, any>;

export interface ResponseFacts {
  method: string;
  url: URL;
  status: number;
  headers: Headers;
  /** the parsed body, for JSON responses */
  json?: unknown;
  /** set when a JSON content type carried a body that did not parse */
  unparsable?: string;
}

interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  literals: number;
  op: Json;
}

export interface ResponseChecker {
  /** problems with this response; [] when it is as documented or no documented operation matches it */
  check(facts: ResponseFacts): string[];
  /** the documented operation a request reaches, if any */
  operation(method: string, pathname: string): { template: string; op: Json } | null;
}

// CommonJS with `exports.default`: ES modules see the module object as the default export.
const addFormats = ajvFormats.default as unknown as (ajv: Ajv2020) => Ajv2020;
const DOCUMENT_ID = 'urn:vieneu:openapi';
const pointer = (...parts: string[]) => parts.map((p) => encodeURIComponent(p.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');
const mediaType = (value: string | null) => (value ?? '').split(';')[0]!.trim().toLowerCase();
const isJson = (type: string) => type === 'application/json' || type.endsWith('+json');

function operationsOf(doc: Json): Operation[] {
  const out: Operation[] = [];
  for (const [template, ops] of Object.entries(doc.paths as Json)) {
    const segments = template.split('/');
    const pattern = new RegExp(`^${segments.map((s) => (/^\{.+\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))).join('/')}/?$`);
    const literals = segments.filter((s) => !/^\{.+\}$/.test(s)).length;
    for (const [method, op] of Object.entries(ops as Json)) out.push({ method: method.toUpperCase(), template, pattern, literals, op: op as Json });
  }
  // The most literal template wins (`/tts/stream` over `/tts/{jobId}`), as routers do.
  return out.sort((a, b) => b.literals - a.literals);
}

function headerProblems(doc: Json, response: Json, headers: Headers): string[] {
  const problems: string[] = [];
  for (const [name, raw] of Object.entries((response.headers ?? {}) as Json)) {
    const header = raw.$ref ? doc.components.headers[String(raw.$ref).split('/').pop()!] : raw;
    const value = headers.get(name);
    if (value === null) {
      if (header.required) problems.push(`header ${name} is documented as always sent but is missing`);
      continue;
    }
    const type = header.schema?.type;
    if (type === 'integer' || type === 'number') {
      const n = Number(value);
      const ok = value.trim() !== '' && Number.isFinite(n) && (type === 'number' || Number.isInteger(n)) && (header.schema.minimum === undefined || n >= header.schema.minimum);
      if (!ok) problems.push(`header ${name}: "${value}" is not the documented ${type}`);
    }
  }
  return problems;
}

function createChecker(doc: Json): ResponseChecker {
  const ajv = new Ajv2020({ strict: false, allErrors: true, logger: false });
  addFormats(ajv);
  ajv.addFormat('binary', true);
  ajv.addSchema({ ...doc, servers: undefined }, DOCUMENT_ID);
  const operations = operationsOf(doc);
  const validators = new Map<string, ValidateFunction>();
  const validatorFor = (template: string, method: string, status: string, type: string) => {
    const ref = `${DOCUMENT_ID}#/${pointer('paths', template, method.toLowerCase(), 'responses', status, 'content', type, 'schema')}`;
    let validate = validators.get(ref);
    if (!validate) {
      validate = ajv.compile({ $ref: ref });
      validators.set(ref, validate);
    }
    return validate;
  };
  const find = (method: string, pathname: string) => operations.find((o) => o.method === method && o.pattern.test(pathname)) ?? null;

  return {
    operation(method, pathname) {
      const found = find(method.toUpperCase(), pathname);
      return found ? { template: found.template, op: found.op } : null;
    },
    check(facts) {
      const method = facts.method.toUpperCase();
      const found = find(method, facts.url.pathname);
      if (!found) return [];
      const { op, template } = found;
      const where = `${method} ${template} (route "${op.operationId}" of plugin ${op['x-plugin'] ?? 'core'})`;
      const code = facts.json && typeof facts.json === 'object' ? (facts.json as Json).code : undefined;
      const answered = `${method} ${facts.url.pathname} answered ${facts.status}${typeof code === 'string' ? ` ${code}` : ''}`;
      const status = String(facts.status);
      const response = op.responses[status] ?? op.responses.default;
      if (!response) {
        return [`${answered}, which the API reference does not document for ${where} (documented: ${Object.keys(op.responses).join(', ')}): add responses[${status}] to its route definition.`];
      }
      const problems = headerProblems(doc, response, facts.headers).map((p) => `${answered}: ${p} (${where})`);
      const content = (response.content ?? {}) as Json;
      const type = mediaType(facts.headers.get('content-type'));
      const types = Object.keys(content);
      if (types.length === 0 || (type === '' && method === 'HEAD')) return problems;
      if (!types.includes(type)) {
        problems.push(`${answered} with content type "${type || 'none'}", but ${where} documents ${types.join(', ')} for ${status}.`);
        return problems;
      }
      if (!isJson(type)) return problems;
      if (facts.unparsable !== undefined) {
        problems.push(`${answered} with a ${type} body that is not JSON: ${facts.unparsable.slice(0, 200)}`);
        return problems;
      }
      const validate = validatorFor(template, method, status, type);
      if (!validate(facts.json)) {
        const errors = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '(body)'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` "${e.params.additionalProperty}"` : ''}`);
        problems.push(`${answered} with a body that differs from what ${where} documents: ${errors.join('; ')}. Body: ${JSON.stringify(facts.json).slice(0, 300)}`);
      }
      return problems;
    },
  };
}

const checkers = new Map<string, ResponseChecker>();

/** The checker of a document; documents that differ only in `servers` share one. */
export function responseChecker(doc: Json): ResponseChecker {
  const key = createHash('sha256').update(JSON.stringify({ paths: doc.paths, components: doc.components })).digest('hex');
  let checker = checkers.get(key);
  if (!checker) {
    checker = createChecker(doc);
    checkers.set(key, checker);
  }
  return checker;
}
