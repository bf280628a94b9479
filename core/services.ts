import type { Db } from 'mongodb';
import type { Config } from '../config/load.ts';
import type { Logger } from './logger.ts';
import type { Metrics } from './metrics.ts';
import type { Documents } from './ports/documents.ts';
import type { JobsStore } from './ports/jobs.ts';
import type { WebhooksStore } from './ports/webhooks.ts';
import type { Bus, OutgoingMessage } from './ports/bus.ts';
import type { Counters } from './ports/counters.ts';
import type { Blobs } from './ports/blobs.ts';
import type { Analytics } from './ports/analytics.ts';
import type { SpeechEngine } from './ports/engine.ts';
import type { EmbeddedDb } from './adapters/embedded-db.ts';
import type { BillingService } from './billing/service.ts';
import type { VoiceCatalog } from './catalog.ts';
import type { DownloadLinks } from './downloads.ts';
import type { KeyAuthenticator } from './http/auth.ts';
import type { IdentityService } from './identity/service.ts';
import type { SelfApi } from './self-api.ts';

/**
 * Typed service references (Backstage's service refs). A plugin lists the
 * refs it uses in `deps` and receives their instances. `root` services are
 * built once per process; `plugin` services once per plugin that asks (its
 * own logger, its own database namespace, a publisher for its topics).
 */
export interface ServiceRef<T> {
  readonly id: string;
  readonly scope: 'root' | 'plugin';
  /** parameters of a parameterised ref (e.g. the topics of a publisher) */
  readonly options?: unknown;
  /** carries the type only */
  readonly $type?: T;
}

export function createServiceRef<T>(id: string, scope: 'root' | 'plugin' = 'root', options?: unknown): ServiceRef<T> {
  return { id, scope, options };
}

/** Who asks for a plugin-scoped service. */
export interface ServiceRequester {
  pluginId: string;
  options?: unknown;
}

type Deps = Record<string, ServiceRef<unknown>>;
type Resolved<D extends Deps> = { [K in keyof D]: D[K] extends ServiceRef<infer T> ? T : never };

/** How a service is built: from other services; `close` runs at shutdown, in reverse order of building. */
export interface ServiceFactory<T, D extends Deps = Deps> {
  ref: ServiceRef<T>;
  deps: D;
  create(deps: Resolved<D>, requester: ServiceRequester): Promise<T> | T;
  close?(instance: T): Promise<void> | void;
}

export function createServiceFactory<T, D extends Deps>(factory: ServiceFactory<T, D>): ServiceFactory<T, D> {
  return factory;
}

/** Publishes to the topics a plugin declared, and only those. */
export interface Publisher {
  publish<T>(topic: string, messages: OutgoingMessage<T>[]): Promise<void>;
}

/**
 * A plugin's own storage on the configured system of record, so a plugin can
 * keep data without a change in core: the embedded SQLite file, or the
 * MongoDB database. A plugin writes one store adapter per kind (its own port)
 * and names its tables or collections with `prefix`.
 */
export interface PluginDatabase {
  readonly kind: 'sqlite' | 'mongo';
  /** `<pluginId>_`: start every table or collection name with it */
  readonly prefix: string;
  /** the embedded file; throws when kind is mongo */
  sqlite(): EmbeddedDb;
  /** the MongoDB database; throws when kind is sqlite */
  mongo(): Db;
}

/** The process lifecycle as plugins see it. */
export interface Lifecycle {
  /** fires when the process starts shutting down (readiness is already false) */
  readonly shuttingDown: AbortSignal;
  /** epoch ms by which in-flight work must be settled or handed back; null while running */
  deadline(): number | null;
}

export const coreServices = {
  config: createServiceRef<Config>('core.config'),
  logger: createServiceRef<Logger>('core.logger', 'plugin'),
  metrics: createServiceRef<Metrics>('core.metrics'),
  lifecycle: createServiceRef<Lifecycle>('core.lifecycle'),
  /** accounts, keys, grants, clones and the billing ledger (the system of record) */
  documents: createServiceRef<Documents>('core.documents'),
  jobs: createServiceRef<JobsStore>('core.jobs'),
  webhooks: createServiceRef<WebhooksStore>('core.webhooks'),
  /** the whole bus, for consumers; plugins that only publish ask for `publisher([...])` */
  bus: createServiceRef<Bus>('core.bus'),
  publisher: (topics: string[]) => createServiceRef<Publisher>('core.publisher', 'plugin', { topics }),
  counters: createServiceRef<Counters>('core.counters'),
  blobs: createServiceRef<Blobs>('core.blobs'),
  analytics: createServiceRef<Analytics>('core.analytics'),
  /** no default in core: a module (inference/) provides it */
  engine: createServiceRef<SpeechEngine>('core.engine'),
  billing: createServiceRef<BillingService>('core.billing'),
  catalog: createServiceRef<VoiceCatalog>('core.catalog'),
  downloads: createServiceRef<DownloadLinks>('core.downloads'),
  keys: createServiceRef<KeyAuthenticator>('core.keys'),
  database: createServiceRef<PluginDatabase>('core.database', 'plugin'),
  /** users, sign-in sessions, lockout and CSRF tokens, shared by every sign-in feature */
  identity: createServiceRef<IdentityService>('core.identity'),
  /** this process's own API over loopback, and `{base_url}` */
  selfApi: createServiceRef<SelfApi>('core.self-api'),
};
