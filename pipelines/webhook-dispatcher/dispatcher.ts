import { readFileSync } from 'node:fs';
import type { Config } from '../../config/load.ts';
import type { Blobs } from '../../core/ports/blobs.ts';
import type { Bus, Subscription } from '../../core/ports/bus.ts';
import type { DownloadLinks } from '../../core/downloads.ts';
import type { Logger } from '../../core/logger.ts';
import type { Metrics } from '../../core/metrics.ts';
import type { WebhooksStore } from '../../core/ports/webhooks.ts';
import { attemptDelivery } from './attempt.ts';
import { systemResolver, type Resolver } from '../../core/net/destination.ts';
import { startFanOut } from './fanout.ts';
import { createHttpsTransport, type Transport } from './http-post.ts';
import { systemClock, type Clock } from './schedule.ts';
import { createScheduler, type Scheduler, type SchedulerOptions } from './scheduler.ts';

/**
 * The webhook dispatcher (pipelines role): the `tts.job.events` consumer
 * that records deliveries, and the scheduler that sends them. Every knob a
 * test needs to drive time, DNS or the network is an option here; the
 * defaults are production's.
 */
export interface DispatcherOptions extends SchedulerOptions {
  clock: Clock;
  resolve: Resolver;
  /** replaces the HTTPS client (unit tests that must not touch the network) */
  transport: Transport | null;
  totalTimeoutMs: number;
  connectTimeoutMs: number;
  /** false: no consumer and no loop; the caller drives `runDue()` */
  autoStart: boolean;
}

export const DEFAULT_DISPATCHER_OPTIONS: Omit<DispatcherOptions, 'retryScale'> = {
  clock: systemClock,
  resolve: systemResolver,
  transport: null,
  totalTimeoutMs: 10_000,
  connectTimeoutMs: 10_000,
  concurrency: 64,
  maxPerEndpoint: 8,
  // A quarter of the slots: an account with many hanging receivers leaves the rest to everyone else.
  maxPerAccount: 16,
  leaseMs: 60_000,
  pollIntervalMs: 500,
  autoStart: true,
};

export interface DispatcherDeps {
  store: WebhooksStore;
  bus: Pick<Bus, 'subscribe'>;
  blobs: Pick<Blobs, 'exists'>;
  downloads: Pick<DownloadLinks, 'sign'>;
  logger: Logger;
  metrics?: Pick<Metrics, 'webhookDeliveries' | 'webhookDeliveriesDead'>;
  config: Config['webhooks'];
}

export interface WebhookDispatcher {
  scheduler: Scheduler;
  /** runs every attempt that is due now; for tests on a controlled clock */
  runDue(): Promise<number>;
  stop(): Promise<void>;
}

export async function startWebhookDispatcher(deps: DispatcherDeps, overrides: Partial<DispatcherOptions> = {}): Promise<WebhookDispatcher> {
  const options: DispatcherOptions = { ...DEFAULT_DISPATCHER_OPTIONS, retryScale: deps.config.retryScale, ...overrides };
  // The delivered series exists from the start, so a dashboard shows 0 rather than nothing.
  deps.metrics?.webhookDeliveries.inc({ result: 'delivered' }, 0);
  deps.metrics?.webhookDeliveriesDead.inc(0);
  const https = options.transport
    ? null
    : createHttpsTransport({
        ca: deps.config.caFile ? readFileSync(deps.config.caFile, 'utf8') : null,
        maxSocketsPerHost: options.concurrency,
        maxTotalSockets: options.concurrency,
      });
  const transport = options.transport ?? https!.post;
  const policy = { allowLoopback: deps.config.allowLoopback, resolve: options.resolve };
  if (deps.config.allowLoopback) deps.logger.warn('WEBHOOK_ALLOW_LOOPBACK is on: webhooks may be delivered to 127.0.0.0/8 and ::1. This switch is for tests only.');

  const scheduler = createScheduler({
    store: deps.store,
    clock: options.clock,
    logger: deps.logger,
    metrics: deps.metrics,
    options,
    attempt: (delivery) =>
      attemptDelivery(delivery, {
        store: deps.store,
        blobs: deps.blobs,
        downloads: deps.downloads,
        transport,
        clock: options.clock,
        policy,
        totalTimeoutMs: options.totalTimeoutMs,
        connectTimeoutMs: options.connectTimeoutMs,
      }),
  });

  let subscription: Subscription | null = null;
  if (options.autoStart) {
    subscription = await startFanOut({ bus: deps.bus, store: deps.store, clock: options.clock, logger: deps.logger, onEnqueued: scheduler.wake });
    scheduler.start();
  }

  return {
    scheduler,
    runDue: () => scheduler.runDue(),
    async stop() {
      await subscription?.stop();
      await scheduler.stop();
      https?.close();
    },
  };
}
