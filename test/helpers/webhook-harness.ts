import { openMemoryDb } from '../../core/adapters/embedded-db.ts';
import { createSqliteDocuments } from '../../core/adapters/documents/sqlite.ts';
import { createSqliteWebhooks } from '../../core/adapters/webhooks/sqlite.ts';
import { createDownloadLinks, type DownloadLinks } from '../../core/downloads.ts';
import { createLogger } from '../../core/logger.ts';
import type { Metrics } from '../../core/metrics.ts';
import type { Bus, MessageHandler, Subscription } from '../../core/ports/bus.ts';
import type { Documents } from '../../core/ports/documents.ts';
import { jobEventId, type JobCompletedEvent, type JobFailedEvent } from '../../core/ports/job-events.ts';
import type { WebhooksStore } from '../../core/ports/webhooks.ts';
import type { Resolver } from '../../core/net/destination.ts';
import { startWebhookDispatcher, type DispatcherOptions, type WebhookDispatcher } from '../../pipelines/webhook-dispatcher/dispatcher.ts';
import { createWebhookService, type WebhookService } from '../../plugins/webhooks/service.ts';

/**
 * Everything a webhook test needs around the dispatcher: the SQLite store,
 * documents for key checks, a clock the test moves, a blob set, real
 * download links, a bus that hands published job events to the consumer,
 * and a resolver with staged answers.
 */
export const T0 = Date.parse('2026-11-21T10:00:00.000Z');
export const ACCOUNT = 'acct_webhooks';

export class ManualClock {
  constructor(public ms: number = T0) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

/** The subscribe side of the bus port, in memory: `publish` runs the consumer's handler like a delivery would. */
export class FakeBus implements Pick<Bus, 'subscribe'> {
  handlers = new Map<string, MessageHandler<unknown>>();
  async subscribe<T>(options: { topic: string; handler: MessageHandler<T> }): Promise<Subscription> {
    this.handlers.set(options.topic, options.handler as MessageHandler<unknown>);
    return { stop: async () => void this.handlers.delete(options.topic) };
  }
  async publish(topic: string, id: string, value: unknown, attempt = 1): Promise<void> {
    const handler = this.handlers.get(topic);
    if (!handler) throw new Error(`nothing subscribed to ${topic}`);
    await handler({ id, key: id, value, publishedAt: new Date().toISOString(), attempt });
  }
}

export interface WebhookHarness {
  store: WebhooksStore;
  documents: Documents;
  service: WebhookService;
  clock: ManualClock;
  blobs: Set<string>;
  downloads: DownloadLinks;
  bus: FakeBus;
  /** host name -> addresses; a name not listed fails like NXDOMAIN */
  dns: Map<string, string[]>;
  resolve: Resolver;
  dispatcher(config: { allowLoopback: boolean; caFile?: string | null; retryScale?: number; metrics?: Metrics }, options?: Partial<DispatcherOptions>): Promise<WebhookDispatcher>;
  close(): Promise<void>;
}

export function createWebhookHarness(serviceAllowsLoopback = true): WebhookHarness {
  const db = openMemoryDb();
  const store = createSqliteWebhooks(db);
  const documents = createSqliteDocuments(db);
  const clock = new ManualClock();
  const dns = new Map<string, string[]>();
  const resolve: Resolver = async (hostname) => {
    const answer = dns.get(hostname);
    if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return answer;
  };
  const blobs = new Set<string>();
  const downloads = createDownloadLinks('webhook-test-signing-secret', 'https://api.vieneu.test');
  const bus = new FakeBus();
  const dispatchers: WebhookDispatcher[] = [];
  const service = createWebhookService({ store, keys: documents.keys, policy: { allowLoopback: serviceAllowsLoopback, resolve }, now: () => new Date(clock.now()) });
  return {
    store, documents, service, clock, blobs, downloads, bus, dns, resolve,
    async dispatcher(config, options = {}) {
      const d = await startWebhookDispatcher(
        {
          store, bus, downloads,
          blobs: { exists: async (key) => blobs.has(key) },
          logger: createLogger('silent'),
          metrics: config.metrics,
          config: { allowLoopback: config.allowLoopback, caFile: config.caFile ?? null, retryScale: config.retryScale ?? 1 },
        },
        { clock, resolve, autoStart: false, ...options },
      );
      dispatchers.push(d);
      return d;
    },
    async close() {
      for (const d of dispatchers) await d.stop();
      db.close();
    },
  };
}

let jobs = 0;

export function completedEvent(overrides: Partial<JobCompletedEvent> = {}): JobCompletedEvent {
  const jobId = overrides.jobId ?? `job_${++jobs}_${Math.random().toString(36).slice(2, 8)}`;
  return {
    type: 'tts.job.completed', eventId: jobEventId(jobId, 'tts.job.completed'), jobId, accountId: ACCOUNT, keyId: 'key_main',
    voiceId: 'vi-north-female-mai', engine: 'v4', characterCount: 120, tokenCost: 468, at: new Date(T0).toISOString(),
    durationSeconds: 7.5, processingTimeMs: 1830, audioKey: `jobs/${jobId}.wav`,
    ...overrides,
  };
}

export function failedEvent(overrides: Partial<JobFailedEvent> = {}): JobFailedEvent {
  const jobId = overrides.jobId ?? `job_${++jobs}_${Math.random().toString(36).slice(2, 8)}`;
  return {
    type: 'tts.job.failed', eventId: jobEventId(jobId, 'tts.job.failed'), jobId, accountId: ACCOUNT, keyId: 'key_main',
    voiceId: 'vi-north-female-mai', engine: 'v4', characterCount: 120, tokenCost: 468, at: new Date(T0).toISOString(),
    error: { code: 'synthesis_timeout', message: 'The synthesis did not finish in time.' }, refunded: true,
    ...overrides,
  };
}
