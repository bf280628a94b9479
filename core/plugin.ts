import type Koa from 'koa';
import type { Config, Role } from '../config/load.ts';
import type { Documents } from './ports/documents.ts';
import type { Bus } from './ports/bus.ts';
import type { Counters } from './ports/counters.ts';
import type { Blobs } from './ports/blobs.ts';
import type { Analytics } from './ports/analytics.ts';
import type { SpeechEngine } from './ports/engine.ts';
import type { Logger } from './logger.ts';
import type { Metrics } from './metrics.ts';
import type { BillingService, RequestBilling } from './billing/service.ts';
import type { VoiceCatalog } from './catalog.ts';
import type { DownloadLinks } from './downloads.ts';
import type { AuthContext, KeyAuthenticator } from './http/auth.ts';
import type { OutcomeAnnotation } from './http/outcome.ts';

/**
 * The plugin contract. A plugin is a folder under plugins/ whose index.ts
 * default-exports `definePlugin({...})`. The loader hands `setup` a typed
 * context of core services (Backstage style); everything a plugin adds stays
 * inside what it registers (Fastify style); core runs the request phases
 * around every route (auth, rate limit, envelope, outcome log phase: Kong
 * style), so a plugin only annotates the request.
 */

/** Services every plugin may use. Plugins never import each other. */
export interface CoreServices {
  config: Config;
  logger: Logger;
  metrics: Metrics;
  documents: Documents;
  bus: Bus;
  counters: Counters;
  blobs: Blobs;
  analytics: Analytics;
  engine: SpeechEngine;
  billing: BillingService;
  catalog: VoiceCatalog;
  downloads: DownloadLinks;
  /** API key verification (cached); plugins rarely need it directly */
  keys: KeyAuthenticator;
}

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
}

export type RouteContext = Koa.ParameterizedContext<RequestState> & { params: Record<string, string> };
export type RouteHandler = (ctx: RouteContext) => Promise<void>;

/** Rate-limit classes of SPEC "Limits". `null` = not throttled. */
export type RateClass = 'speech' | 'dialogue' | 'media' | null;

export interface RouteDefinition {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** relative to /api/v1, Koa router syntax (`/tts/:jobId`) */
  path: string;
  /** 'required' (401 without a key), 'optional' (a key adds data), 'none' */
  auth: 'required' | 'optional' | 'none';
  /** also accept the key in this header (e.g. `x-agent-secret`) */
  extraKeyHeader?: string;
  rateClass?: RateClass;
  /** extra per-operation limit (requests per minute per key), e.g. webhook management */
  perMinute?: number;
  /** logical route name for usage and metrics (`tts`, `audio_speech`, ...); billable routes publish outcomes */
  name: string;
  /** publish an outcome event for this route (billable and usage-tracked routes) */
  tracked?: boolean;
  /** error envelope: native (default) or the compatible `/audio/speech` one */
  envelope?: 'native' | 'compat';
  /** body parsing: json (default), multipart, or none (handler reads the raw stream) */
  body?: 'json' | 'multipart' | 'none';
  /** max body size for json bodies (default 1mb) */
  jsonLimit?: string;
  handler: RouteHandler;
}

export interface BackgroundWorker {
  name: string;
  /** which process role runs it */
  role: Role;
  /** starts the worker; resolves with a stop function that drains it */
  start(): Promise<() => Promise<void>>;
}

export interface PluginContext extends CoreServices {
  /** registers a route under /api/v1 */
  route(definition: RouteDefinition): void;
  /** registers a background worker (bus consumer, scheduler) for a role */
  worker(worker: BackgroundWorker): void;
}

export interface PluginManifest {
  name: string;
  version: string;
  /** short description for the README and /readyz listings */
  description: string;
  setup(context: PluginContext): void | Promise<void>;
}

export function definePlugin(manifest: PluginManifest): PluginManifest {
  if (!/^[a-z0-9-]+$/.test(manifest.name)) throw new Error(`plugin name "${manifest.name}" must be lowercase letters, digits and dashes`);
  return manifest;
}
