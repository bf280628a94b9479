import path from 'node:path';
import type { Db } from 'mongodb';
import type { Config } from '../../config/load.ts';
import type { Documents } from '../ports/documents.ts';
import type { Blobs } from '../ports/blobs.ts';
import type { Bus } from '../ports/bus.ts';
import type { Counters, RateLimiter } from '../ports/counters.ts';
import type { Analytics } from '../ports/analytics.ts';
import { openEmbeddedDb, type EmbeddedDb } from '../adapters/embedded-db.ts';
import { checkpointInBackground, type WalCheckpointer } from '../adapters/wal-checkpointer.ts';
import { createLogger, type Logger } from '../logger.ts';
import { createMetrics, type Metrics } from '../metrics.ts';
import { createBillingService } from '../billing/service.ts';
import { createVoiceCatalog } from '../catalog.ts';
import { createDownloadLinks } from '../downloads.ts';
import { createKeyAuthenticator, type CredentialVerifier } from '../http/auth.ts';
import { createIdentityService } from '../identity/service.ts';
import { createSelfApi, type BindableSelfApi } from '../self-api.ts';
import { instrumentBus } from '../bus-metrics.ts';
import { loggerReporter, type BusErrorReporter } from '../adapters/bus/retry.ts';
import { coreServices, createServiceFactory, createServiceRef, type Lifecycle, type PluginDatabase, type Publisher, type ServiceFactory } from '../services.ts';

/**
 * Core's service factories: the production adapter of each port when its
 * setting is present, the embedded default otherwise. Only this file knows
 * which adapters exist; everything is built on first use, so a process opens
 * only what its features asked for.
 */

/** The system of record: documents and blobs on MongoDB (GridFS) or on the embedded file and a directory. */
export interface SystemOfRecord {
  documents: Documents;
  blobs: Blobs;
  mongo: Db | null;
  sqlite: EmbeddedDb | null;
  close(): Promise<void>;
}

/**
 * A MongoDB that keeps its connections open but stops answering must not hold
 * requests for good (`GET /tts/{id}` waited 12 minutes on such a server): an
 * operation waits at most this long for a reply, then fails as unreachable
 * (503, Retry-After). It counts only while an operation is in flight, so a
 * download read slowly is not cut. A `socketTimeoutMS` in MONGODB_URL wins.
 */
export const MONGO_SOCKET_TIMEOUT_MS = 30_000;

export function mongoClientOptions(url: string): { socketTimeoutMS?: number } {
  return /[?&]sockettimeoutms=/i.test(url) ? {} : { socketTimeoutMS: MONGO_SOCKET_TIMEOUT_MS };
}

/** Opens documents and blobs as configured; the admin CLI uses it alone. */
export async function openSystemOfRecord(config: Config, embeddedDb: () => EmbeddedDb): Promise<SystemOfRecord> {
  if (config.mongo) {
    const { MongoClient } = await import('mongodb');
    const client = new MongoClient(config.mongo.url, mongoClientOptions(config.mongo.url));
    await client.connect();
    const { createMongoDocuments } = await import('../adapters/documents/mongo.ts');
    const { createGridFsBlobs } = await import('../adapters/blobs/gridfs.ts');
    const db = client.db(config.mongo.db);
    const documents = await createMongoDocuments(client, config.mongo.db);
    return { documents, blobs: createGridFsBlobs(db), mongo: db, sqlite: null, close: () => client.close() };
  }
  const { createSqliteDocuments } = await import('../adapters/documents/sqlite.ts');
  const { createDirectoryBlobs } = await import('../adapters/blobs/directory.ts');
  const sqlite = embeddedDb();
  const documents = createSqliteDocuments(sqlite);
  return { documents, blobs: createDirectoryBlobs(path.join(config.dataDir, 'blobs')), mongo: null, sqlite, close: async () => undefined };
}

/** The billing service as configured (the API and the admin CLI build it the same way). */
export function billingFor(config: Config, documents: Documents, metrics?: Metrics) {
  return createBillingService({
    documents,
    engines: config.engines,
    globalMultiplier: config.billing.globalMultiplier,
    aiRefineSurchargePerChar: config.billing.aiRefineSurchargePerChar,
    timezoneOffsetMinutes: config.billing.timezoneOffsetMinutes,
    metrics,
  });
}

/** The identity service as configured (the API and the admin CLI build it the same way). */
export function identityFor(config: Config, documents: Documents, rateLimiter: RateLimiter) {
  return createIdentityService({
    store: documents.identity,
    rateLimiter,
    accountExists: async (accountId) => (await documents.accounts.get(accountId)) !== null,
    settings: config.identity,
  });
}

const recordsRef = createServiceRef<SystemOfRecord>('core.internal.records');
/** the kernel binds it to the API listener once that is up */
export const selfApiRef = createServiceRef<BindableSelfApi>('core.internal.self-api');
const rootLoggerRef = createServiceRef<Logger>('core.internal.root-logger');

export interface CoreFactoryOptions {
  metrics?: Metrics;
  lifecycle: Lifecycle;
  /** engine features of the loaded plugins (`GET /engines` lists only these) */
  engineFeatures: () => Set<string>;
  /** credential verifiers the loaded plugins registered (consulted for bearer tokens that are not keys) */
  credentialVerifiers: () => CredentialVerifier[];
}

/** Core's factories, and `closeLast` for the embedded file, which every embedded adapter shares and which closes after them. */
export function coreServiceFactories(config: Config, options: CoreFactoryOptions): { factories: ServiceFactory<any, any>[]; closeLast(): Promise<void> } {
  const none = {};
  let embedded: EmbeddedDb | null = null;
  let checkpointer: WalCheckpointer | null = null;
  // Opened on first use only: a deployment on MongoDB, Kafka and ClickHouse never creates the file.
  const embeddedDb = () => {
    if (embedded) return embedded;
    embedded = openEmbeddedDb(config.dataDir);
    checkpointer = checkpointInBackground(embedded, {
      onFallback: (err) => createLogger(config.logLevel).warn('WAL checkpoints run on the event loop again', { err }),
      onFailing: (err) => (err
        ? createLogger(config.logLevel).warn('WAL checkpoints are failing; tried again every second while the WAL grows', { err })
        : createLogger(config.logLevel).info('WAL checkpoints succeed again')),
    });
    return embedded;
  };
  const factories = [
    createServiceFactory({ ref: coreServices.config, deps: none, create: () => config }),
    createServiceFactory({ ref: rootLoggerRef, deps: none, create: () => createLogger(config.logLevel) }),
    createServiceFactory({
      ref: coreServices.logger, deps: { root: rootLoggerRef },
      create: ({ root }, requester) => (requester.pluginId === 'core' ? root : root.child({ plugin: requester.pluginId })),
    }),
    createServiceFactory({ ref: coreServices.metrics, deps: none, create: () => options.metrics ?? createMetrics() }),
    createServiceFactory({ ref: coreServices.lifecycle, deps: none, create: () => options.lifecycle }),
    createServiceFactory({
      ref: recordsRef, deps: none,
      // Asked for lazily: a MongoDB deployment never opens the embedded file for records.
      create: () => openSystemOfRecord(config, embeddedDb),
      close: async (records) => {
        await records.documents.close();
        await records.blobs.close();
        await records.close();
      },
    }),
    createServiceFactory({ ref: coreServices.documents, deps: { records: recordsRef }, create: ({ records }) => records.documents }),
    createServiceFactory({ ref: coreServices.jobs, deps: { records: recordsRef }, create: ({ records }) => records.documents.jobs }),
    createServiceFactory({ ref: coreServices.webhooks, deps: { records: recordsRef }, create: ({ records }) => records.documents.webhooks }),
    createServiceFactory({ ref: coreServices.blobs, deps: { records: recordsRef }, create: ({ records }) => records.blobs }),
    createServiceFactory({
      ref: coreServices.database, deps: { records: recordsRef },
      create: ({ records }, requester): PluginDatabase => pluginDatabase(records, requester.pluginId),
    }),
    createServiceFactory({
      ref: coreServices.bus, deps: { metrics: coreServices.metrics, logger: coreServices.logger },
      create: async ({ metrics, logger }) => instrumentBus(await openBus(config, embeddedDb, loggerReporter(config.kafka ? 'kafka' : 'local', logger), logger), metrics),
      close: (bus) => bus.close(),
    }),
    createServiceFactory({
      ref: coreServices.publisher([]), deps: { bus: coreServices.bus },
      create: ({ bus }, requester) => scopedPublisher(bus, requester.pluginId, (requester.options as { topics: string[] }).topics),
    }),
    createServiceFactory({
      ref: coreServices.analytics, deps: none,
      create: () => openAnalytics(config, embeddedDb),
      close: (analytics) => analytics.close(),
    }),
    createServiceFactory({
      ref: coreServices.counters, deps: { logger: coreServices.logger },
      create: ({ logger }) => openCounters(config, logger), close: (counters) => counters.close(),
    }),
    createServiceFactory({
      ref: coreServices.billing, deps: { documents: coreServices.documents, metrics: coreServices.metrics },
      create: ({ documents, metrics }) => billingFor(config, documents, metrics),
    }),
    createServiceFactory({
      ref: coreServices.catalog, deps: { documents: coreServices.documents },
      create: ({ documents }) => createVoiceCatalog({
        engines: config.engines.map((e) => ({ ...e, features: e.features.filter((f) => options.engineFeatures().has(f)) })),
        voices: config.voices, defaultVoiceId: config.defaultVoiceId, clones: documents.clones,
      }),
    }),
    createServiceFactory({
      ref: coreServices.downloads, deps: none,
      create: () => createDownloadLinks(config.urlSigningSecret, config.publicBaseUrl ?? `http://127.0.0.1:${config.port}`),
    }),
    createServiceFactory({
      ref: coreServices.keys, deps: { documents: coreServices.documents },
      create: ({ documents }) => createKeyAuthenticator(documents, 2000, options.credentialVerifiers),
    }),
    createServiceFactory({
      ref: coreServices.identity, deps: { documents: coreServices.documents, counters: coreServices.counters },
      create: ({ documents, counters }) => identityFor(config, documents, counters.rateLimiter),
    }),
    createServiceFactory({ ref: selfApiRef, deps: none, create: () => createSelfApi(config.publicBaseUrl) }),
    createServiceFactory({ ref: coreServices.selfApi, deps: { self: selfApiRef }, create: ({ self }) => self }),
  ];
  return {
    factories,
    async closeLast() {
      await checkpointer?.stop();
      checkpointer = null;
      embedded?.close();
      embedded = null;
    },
  };
}

async function openBus(config: Config, embeddedDb: () => EmbeddedDb, onError: BusErrorReporter, logger: Logger): Promise<Bus> {
  if (config.kafka) {
    const { createKafkaBus } = await import('../adapters/bus/kafka.ts');
    return createKafkaBus({ ...config.kafka, onError, logging: { logger, level: config.logLevel } });
  }
  const { createLocalBus } = await import('../adapters/bus/local.ts');
  return createLocalBus(embeddedDb(), { onError });
}

async function openAnalytics(config: Config, embeddedDb: () => EmbeddedDb): Promise<Analytics> {
  if (config.clickhouse) {
    const { createClickHouseAnalytics } = await import('../adapters/analytics/clickhouse.ts');
    return createClickHouseAnalytics(config.clickhouse);
  }
  const { createSqliteAnalytics } = await import('../adapters/analytics/sqlite.ts');
  return createSqliteAnalytics(embeddedDb());
}

async function openCounters(config: Config, logger: Logger): Promise<Counters> {
  if (config.redisUrl) {
    const { Redis } = await import('ioredis');
    const { createRedisCounters, REDIS_CLIENT_OPTIONS, reportRedisErrors } = await import('../adapters/counters/redis.ts');
    const redis = new Redis(config.redisUrl, REDIS_CLIENT_OPTIONS);
    reportRedisErrors(redis, logger);
    return createRedisCounters(redis, undefined, logger);
  }
  const { createMemoryCounters } = await import('../adapters/counters/memory.ts');
  return createMemoryCounters();
}

function pluginDatabase(records: SystemOfRecord, pluginId: string): PluginDatabase {
  const prefix = `${pluginId.replace(/-/g, '_')}_`;
  return {
    kind: records.mongo ? 'mongo' : 'sqlite',
    prefix,
    sqlite() {
      if (!records.sqlite) throw new Error(`plugin "${pluginId}" asked for SQLite, but the system of record is MongoDB`);
      return records.sqlite;
    },
    mongo() {
      if (!records.mongo) throw new Error(`plugin "${pluginId}" asked for MongoDB, but the system of record is the embedded file`);
      return records.mongo;
    },
  };
}

/** A publisher limited to the topics a plugin declared: publishing elsewhere is a programming error. */
function scopedPublisher(bus: Bus, pluginId: string, topics: string[]): Publisher {
  const allowed = new Set(topics);
  return {
    publish(topic, messages) {
      if (!allowed.has(topic)) throw new Error(`plugin "${pluginId}" publishes to "${topic}" but declared only ${topics.join(', ') || 'no topics'}`);
      return bus.publish(topic, messages);
    },
  };
}

/** Documents alone (the admin CLI): no bus, engine or server. */
export async function openDocumentsOnly(config: Config): Promise<{ documents: Documents; close(): Promise<void> }> {
  const { documents, close } = await openRecordsForAdmin(config, { analytics: false });
  return { documents, close };
}

/** Documents and, when asked, usage analytics (the admin CLI's reconcile-all), sharing one embedded file. */
export async function openRecordsForAdmin(config: Config, options: { analytics: boolean }): Promise<{ documents: Documents; analytics: Analytics | null; close(): Promise<void> }> {
  let db: EmbeddedDb | null = null;
  const embeddedDb = () => (db ??= openEmbeddedDb(config.dataDir));
  const records = await openSystemOfRecord(config, embeddedDb);
  const closeRecords = async () => {
    await records.documents.close();
    await records.close();
  };
  const analytics = options.analytics
    ? await openAnalytics(config, embeddedDb).catch(async (err: unknown) => {
      await closeRecords();
      db?.close();
      throw err;
    })
    : null;
  return {
    documents: records.documents,
    analytics,
    async close() {
      await analytics?.close();
      await closeRecords();
      db?.close();
    },
  };
}
