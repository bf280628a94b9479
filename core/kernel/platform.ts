import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../../config/load.ts';
import { createRuntime } from './runtime.ts';
import { importPlugins, setupPlugins } from './loader.ts';
import { buildKoaApp } from '../http/app.ts';
import { adminRouter } from '../../plugins/admin/routes.ts';
import { startOutboxRelay } from '../billing/outbox-relay.ts';
import { startLedgerWriter } from '../../pipelines/ledger-writer/writer.ts';
import { startUsageAggregator } from '../../pipelines/usage-aggregator/aggregator.ts';
import { startInferenceWorker } from '../../inference/worker.ts';
import { startInferenceEndpoint } from '../../inference/endpoint.ts';
import type { BackgroundWorker, CoreServices } from '../plugin.ts';
import type { Metrics } from '../metrics.ts';

export interface Platform {
  services: CoreServices;
  /** base URL of the API server, or null when this process has no api role */
  url: string | null;
  server: http.Server | null;
  stop(): Promise<void>;
}

/** Core's own background work, by role. */
function coreWorkers(services: CoreServices): BackgroundWorker[] {
  return [
    {
      name: 'core:ledger-outbox-relay',
      role: 'api',
      start: async () => startOutboxRelay({ documents: services.documents, bus: services.bus, logger: services.logger }),
    },
    {
      name: 'core:ledger-writer',
      role: 'pipelines',
      start: async () => {
        const sub = await startLedgerWriter(services);
        return () => sub.stop();
      },
    },
    {
      name: 'core:usage-aggregator',
      role: 'pipelines',
      start: async () => {
        const sub = await startUsageAggregator(services);
        return () => sub.stop();
      },
    },
    {
      name: 'core:inference-worker',
      role: 'inference',
      start: async () => {
        const { concurrency, jobMaxAttempts, leaseSeconds, retryBaseMs } = services.config.inference;
        const sub = await startInferenceWorker(services, { concurrency, maxAttempts: jobMaxAttempts, leaseSeconds, retryBaseMs });
        return () => sub.stop();
      },
    },
    {
      name: 'core:inference-endpoint',
      role: 'inference',
      start: async () => startInferenceEndpoint(services),
    },
  ];
}

/**
 * Starts the roles this process runs: the API server (Koa with the configured
 * plugins) and the background workers of each role. `npm start` runs all
 * three roles in one process on the embedded defaults.
 */
export async function startPlatform(config: Config, options: { metrics?: Metrics } = {}): Promise<Platform> {
  const runtime = await createRuntime(config, options);
  const { services } = runtime;
  const loaded = await setupPlugins(await importPlugins(config.plugins), services);

  let server: http.Server | null = null;
  let url: string | null = null;
  if (config.roles.includes('api')) {
    const app = buildKoaApp(services, loaded.routes, [adminRouter(services)]);
    server = http.createServer(app.callback());
    server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(config.port, config.host, () => resolve());
    });
    const port = (server.address() as AddressInfo).port;
    url = `http://127.0.0.1:${port}`;
    if (!config.publicBaseUrl) services.downloads.setBaseUrl(url);
  }

  const stops: Array<() => Promise<void>> = [];
  for (const worker of [...coreWorkers(services), ...loaded.workers]) {
    if (!config.roles.includes(worker.role)) continue;
    stops.push(await worker.start());
  }
  services.logger.info('platform started', { roles: config.roles, plugins: config.plugins, url });

  let stopped: Promise<void> | null = null;
  return {
    services,
    url,
    server,
    stop() {
      stopped ??= (async () => {
        if (server) {
          const closing = new Promise<void>((resolve) => server!.close(() => resolve()));
          server.closeIdleConnections();
          setTimeout(() => server!.closeAllConnections(), 5000).unref();
          await closing;
        }
        for (const stop of stops.reverse()) await stop();
        await runtime.close();
      })();
      return stopped;
    },
  };
}
