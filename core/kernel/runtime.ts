import path from 'node:path';
import type { Config } from '../../config/load.ts';
import type { CoreServices } from '../plugin.ts';
import type { Documents } from '../ports/documents.ts';
import type { Bus } from '../ports/bus.ts';
import type { Counters } from '../ports/counters.ts';
import type { Blobs } from '../ports/blobs.ts';
import type { Analytics } from '../ports/analytics.ts';
import type { SpeechEngine } from '../ports/engine.ts';
import { openEmbeddedDb, type EmbeddedDb } from '../adapters/embedded-db.ts';
import { createLogger } from '../logger.ts';
import { createMetrics, type Metrics } from '../metrics.ts';
import { createBillingService } from '../billing/service.ts';
import { createVoiceCatalog } from '../catalog.ts';
import { createDownloadLinks } from '../downloads.ts';
import { createKeyAuthenticator } from '../http/auth.ts';
import { instrumentBus } from '../bus-metrics.ts';
import { createEngine } from '../../inference/engines/factory.ts';

/**
 * Builds every port from configuration: the production adapter when its
 * setting is present, the embedded default otherwise. Only this file knows
 * which adapters exist.
 */
export interface Runtime {
  services: CoreServices;
  /** closes adapters in reverse order of opening */
  close(): Promise<void>;
}

export async function createRuntime(config: Config, options: { metrics?: Metrics } = {}): Promise<Runtime> {
  const logger = createLogger(config.logLevel);
  const metrics = options.metrics ?? createMetrics();
  const closers: Array<() => Promise<void> | void> = [];
  let embedded: EmbeddedDb | null = null;
  const embeddedDb = () => {
    if (!embedded) {
      embedded = openEmbeddedDb(config.dataDir);
      const db = embedded;
      closers.push(() => { db.close(); });
    }
    return embedded;
  };

  const records = await openRecords(config, embeddedDb);
  if (records.close) closers.push(records.close);
  const { documents, blobs } = records;

  let bus: Bus;
  if (config.kafka) {
    const { createKafkaBus } = await import('../adapters/bus/kafka.ts');
    bus = instrumentBus(await createKafkaBus(config.kafka), metrics);
  } else {
    const { createLocalBus } = await import('../adapters/bus/local.ts');
    bus = instrumentBus(createLocalBus(embeddedDb()), metrics);
  }

  let analytics: Analytics;
  if (config.clickhouse) {
    const { createClickHouseAnalytics } = await import('../adapters/analytics/clickhouse.ts');
    analytics = await createClickHouseAnalytics(config.clickhouse);
  } else {
    const { createSqliteAnalytics } = await import('../adapters/analytics/sqlite.ts');
    analytics = createSqliteAnalytics(embeddedDb());
  }

  let counters: Counters;
  if (config.redisUrl) {
    const { Redis } = await import('ioredis');
    const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 2, enableOfflineQueue: true });
    const { createRedisCounters } = await import('../adapters/counters/redis.ts');
    counters = createRedisCounters(redis);
  } else {
    const { createMemoryCounters } = await import('../adapters/counters/memory.ts');
    counters = createMemoryCounters();
  }

  const engine: SpeechEngine = await createEngine(config);

  // Closed last-opened first; the embedded database file goes last.
  closers.unshift(() => documents.close(), () => bus.close(), () => analytics.close(), () => counters.close(), () => blobs.close(), () => engine.close());

  const billing = billingFor(config, documents, metrics);
  const catalog = createVoiceCatalog({ engines: config.engines, voices: config.voices, defaultVoiceId: config.defaultVoiceId, clones: documents.clones });
  const downloads = createDownloadLinks(config.urlSigningSecret, config.publicBaseUrl ?? `http://127.0.0.1:${config.port}`);

  const keys = createKeyAuthenticator(documents);
  const services: CoreServices = { config, logger, metrics, documents, bus, counters, blobs, analytics, engine, billing, catalog, downloads, keys };
  return {
    services,
    async close() {
      for (const close of closers) {
        try {
          await close();
        } catch (err) {
          logger.warn('error while closing an adapter', { err: err as Error });
        }
      }
    },
  };
}

/** The billing service as configured. */
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

/**
 * The system of record: documents and blobs, on MongoDB (with GridFS) when
 * configured, else on the embedded file and data directory.
 */
async function openRecords(config: Config, embeddedDb: () => EmbeddedDb): Promise<{ documents: Documents; blobs: Blobs; close?: () => Promise<void> }> {
  if (config.mongo) {
    const { MongoClient } = await import('mongodb');
    const client = new MongoClient(config.mongo.url);
    await client.connect();
    const { createMongoDocuments } = await import('../adapters/documents/mongo.ts');
    const { createGridFsBlobs } = await import('../adapters/blobs/gridfs.ts');
    return {
      documents: await createMongoDocuments(client, config.mongo.db),
      blobs: createGridFsBlobs(client.db(config.mongo.db)),
      close: () => client.close(),
    };
  }
  const { createSqliteDocuments } = await import('../adapters/documents/sqlite.ts');
  const { createDirectoryBlobs } = await import('../adapters/blobs/directory.ts');
  return { documents: createSqliteDocuments(embeddedDb()), blobs: createDirectoryBlobs(path.join(config.dataDir, 'blobs')) };
}

/** Documents alone, for the admin CLI: no bus, engine or server. */
export async function openDocumentsOnly(config: Config): Promise<{ documents: Documents; close(): Promise<void> }> {
  let db: EmbeddedDb | null = null;
  const records = await openRecords(config, () => (db ??= openEmbeddedDb(config.dataDir)));
  return {
    documents: records.documents,
    async close() {
      await records.close?.();
      db?.close();
    },
  };
}
