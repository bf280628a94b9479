import type Koa from 'koa';
import type Joi from 'joi';
import type { Role } from '../config/load.ts';
import type { AuthContext, CredentialVerifier } from './http/auth.ts';
import type { OutcomeAnnotation } from './http/outcome.ts';
import type { RequestBilling } from './billing/service.ts';
import type { ServiceFactory, ServiceRef } from './services.ts';

/**
 * The plugin contract, version 2. A feature is a folder whose index.ts
 * default-exports `definePlugin({...})`: route plugins under plugins/, and
 * background modules under pipelines/ and inference/ (same contract).
 *
 * - Backstage: a plugin names the services it uses as typed refs (`deps`)
 *   and receives exactly those, already built; it may supply services of its
 *   own (`provides`) for the others.
 * - Fastify: it declares the plugins it depends on (`dependsOn`) and the core
 *   API major version it was written for (`coreApi`); start-up refuses a
 *   missing dependency or a mismatched version by name. What it registers
 *   stays its own: a path claimed twice (as the router matches paths: letter
 *   case, a trailing slash and parameter names do not count) stops start-up,
 *   and so does a setting that core or another feature already declares.
 * - Kong: core runs the request phases around every route (request id, auth,
 *   rate limit, body parsing and validation, the route's own error envelope,
 *   the outcome log phase after the response ends). A plugin only annotates.
 */

/** Major version of the contract below; a plugin states the one it was written for. */
export const CORE_API_VERSION = 2;

/** What a route handler finds on `ctx.state`. */
export interface RequestState {
  requestId: string;
  /** performance.now() when the request arrived, for the duration histogram */
  startedAt: number;
  /** set by core before the handler when the route's auth is 'required' or 'optional' and a key was sent */
  auth: AuthContext | null;
  /** the log-phase annotation; core publishes it as one outcome event */
  outcome: OutcomeAnnotation;
  /** request-scoped billing: charges and refunds recorded on the outcome automatically */
  billing: RequestBilling;
  /**
   * Fires when the process must stop serving this request (shutdown deadline
   * reached): long responses end early and settle their money (refund).
   */
  stopping: AbortSignal;
}

export type RouteContext = Koa.ParameterizedContext<RequestState> & { params: Record<string, string> };

/** Validated input: the values of the route's `request` schemas (defaults applied). */
export interface RouteInput<B, Q> {
  body: B;
  query: Q;
  params: Record<string, string>;
}

export type RouteHandler<B = any, Q = any> = (ctx: RouteContext, input: RouteInput<B, Q>) => Promise<void>;

/** Rate-limit classes of SPEC "Limits". `null` = not throttled. */
export type RateClass = 'speech' | 'dialogue' | 'media' | null;

/** A documented response header (for the API reference). */
export interface HeaderDoc {
  description: string;
  /** the value's schema (a header is a string on the wire; numbers are checked as numbers) */
  schema?: Joi.Schema;
  /** always sent with this response */
  required?: boolean;
}

/**
 * One documented response of a route, for the API reference
 * (`GET /api/v1/openapi.json`, built by core/http/openapi). Responses core
 * itself may give (400 validation, 401, 413, 415, 429, 500 and the edge's
 * 429 and 503) are added by core; a route documents its successes and its
 * own refusals. Integration tests check every response against it.
 */
export interface ResponseDoc {
  description: string;
  /**
   * The JSON body. On an error status (>= 400) it holds only the fields a
   * route adds to its error envelope (e.g. `cloneUrl`); omitted, the body is
   * the route's envelope. Omit it for binary or empty bodies.
   */
  schema?: Joi.Schema;
  /** content type(s) when not JSON (e.g. `audio/mpeg`); a binary body */
  contentType?: string | string[];
  headers?: Record<string, string | HeaderDoc>;
  /** a sample body for the reference (Vietnamese text where there is text) */
  example?: unknown;
}

export interface RouteDefinition<B = any, Q = any> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /**
   * relative to /api/v1, Koa router syntax (`/tts/:jobId`); matched without
   * regard to letter case or a trailing slash, and a static path wins over a
   * parametric one that also matches (`/webhooks/notifications` over
   * `/webhooks/:endpointId`)
   */
  path: string;
  /** 'required' (401 without a key), 'optional' (a key adds data), 'none' */
  auth: 'required' | 'optional' | 'none';
  /** also accept the key in this header (e.g. `x-agent-secret`) */
  extraKeyHeader?: string;
  rateClass?: RateClass;
  /** extra per-operation limit (requests per minute per key), e.g. webhook management */
  perMinute?: number;
  /** logical route name for usage and metrics (`tts`, `audio_speech`, ...) */
  name: string;
  /** publish an outcome event for this route (billable and usage-tracked routes) */
  tracked?: boolean;
  /** error envelope: native (default) or the compatible `/audio/speech` one */
  envelope?: 'native' | 'compat';
  /** body parsing: json (default), multipart, or none (handler reads the raw stream) */
  body?: 'json' | 'multipart' | 'none';
  /** max body size for json bodies (default 1mb) */
  jsonLimit?: string;
  /** validated by core before the handler (400 VALIDATION_FAILED, one message per field) */
  request?: { body?: Joi.Schema<B>; query?: Joi.Schema<Q>; params?: Joi.ObjectSchema };
  /** for the API reference: a multipart form (fields and files) that the handler validates itself */
  form?: Joi.ObjectSchema;
  /** for the API reference: request headers the route reads (e.g. `Idempotency-Key`) */
  requestHeaders?: Record<string, HeaderDoc>;
  /** for the API reference: one line, and optionally more (Markdown) */
  summary?: string;
  description?: string;
  /** for the API reference and the response checks of the tests: every status the route itself answers */
  responses?: Record<number, ResponseDoc>;
  /**
   * a long-lived streamed response (SPEC Limits): its own edge limits per
   * source address, and at most STREAMS_PER_USER open at once per signed-in
   * person (AuthContext.userId)
   */
  stream?: boolean;
  handler: RouteHandler<B, Q>;
}

/** A router outside /api/v1 (admin API, OAuth, MCP, console), mounted on the API listener. */
export interface MountDefinition {
  /** path prefix it owns, e.g. `/admin/v1` */
  prefix: string;
  middleware: Koa.Middleware;
  /** the public operations it serves, for the API reference (leave out private ones such as HTML pages) */
  operations?: OperationDoc[];
  /** OpenAPI security schemes it provides (e.g. the OAuth authorization server's `oauth2`) */
  securitySchemes?: Record<string, Record<string, unknown>>;
}

/** A public operation of a mount, documented like a route. */
export interface OperationDoc {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** the whole path (`/oauth/token`), Koa router syntax for parameters */
  path: string;
  /** operationId */
  name: string;
  summary: string;
  description?: string;
  request?: {
    body?: Joi.Schema;
    /** content type(s) of the body (default application/json) */
    bodyContentType?: string | string[];
    query?: Joi.ObjectSchema;
  };
  /** error bodies without a schema: the native envelope, or none (the operation documents its own) */
  envelope?: 'native' | 'none';
  /** security scheme names (any one of them); none = open */
  security?: string[];
  responses: Record<number, ResponseDoc>;
}

export interface BackgroundWorker {
  name: string;
  /** which process role runs it */
  role: Role;
  /** starts the worker; resolves with a stop function that drains it (stop intake, finish or hand back in-flight work) */
  start(): Promise<() => Promise<void>>;
}

/**
 * A readiness check of the role that registered it (`/readyz`). A failure
 * reads `unreachable` when its error means a store or service could not be
 * reached (core/unreachable.ts), `failing` otherwise; its message is shown on
 * the ops port only, never on the public API port.
 */
export interface ReadinessCheck {
  name: string;
  roles: Role[];
  check(): Promise<void>;
}

/** Registers a route under /api/v1 (what `register` receives as `route`). */
export type RouteRegistrar = <B, Q>(definition: RouteDefinition<B, Q>) => void;

type Deps = Record<string, ServiceRef<unknown>>;
export type ResolvedDeps<D extends Deps> = { [K in keyof D]: D[K] extends ServiceRef<infer T> ? T : never };

/**
 * What `register` receives: its declared services and config, and the ways to
 * register. The registrars work only while `register` runs (until its promise
 * resolves): called later (from a timer, a callback) they throw, since the
 * routes, mounts, workers and checks are wired once, at start-up.
 */
export interface RegisterEnv<D extends Deps, C> {
  deps: ResolvedDeps<D>;
  /** the plugin's own config section, validated at start-up with the rest */
  config: C;
  /** registers a route under /api/v1 */
  route: RouteRegistrar;
  /** mounts a router outside /api/v1 */
  mount(definition: MountDefinition): void;
  /** registers a background worker (bus consumer, scheduler) for a role */
  worker(worker: BackgroundWorker): void;
  /** adds a readiness check to /readyz of the given roles */
  readiness(check: ReadinessCheck): void;
  /**
   * registers a verifier of credentials this plugin issues (e.g. OAuth access
   * tokens): core's authentication phase accepts them in place of an API key
   * on every route, as the AuthContext the verifier returns
   */
  authenticator(verifier: CredentialVerifier): void;
}

export interface PluginDefinition<D extends Deps = Deps, C = Record<string, never>> {
  /** lowercase letters, digits and dashes; equals the folder name */
  id: string;
  version: string;
  /** the CORE_API_VERSION it was written for */
  coreApi: number;
  description: string;
  /** plugins that must be loaded with this one (start-up names a missing one) */
  dependsOn?: string[];
  /** the services it uses (refs from `coreServices`): it receives exactly these; an entry that is not a ref stops start-up naming it */
  deps: D;
  /**
   * its own settings (variable names as keys), validated with core's at
   * start-up; each variable has one owner: a name core's schema
   * (config/schema.ts) or another loaded feature declares stops start-up
   * (read core's settings through `coreServices.config`)
   */
  config?: Joi.ObjectSchema<C>;
  /** `GET /engines` feature names this plugin serves (`generate`, `stream`, `dialogue`, ...) */
  engineFeatures?: string[];
  /** services this feature supplies to the others */
  provides?: ServiceFactory<any, any>[];
  register(env: RegisterEnv<D, C>): void | Promise<void>;
}

export function definePlugin<D extends Deps, C = Record<string, never>>(definition: PluginDefinition<D, C>): PluginDefinition<D, C> {
  if (!/^[a-z0-9-]+$/.test(definition.id)) throw new Error(`plugin id "${definition.id}" must be lowercase letters, digits and dashes`);
  return definition;
}
