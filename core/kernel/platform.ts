import http from 'node:http';
import Koa from 'koa';
import type { Config } from '../../config/load.ts';
import type { Metrics } from '../metrics.ts';
import type { Logger } from '../logger.ts';
import type { BackgroundWorker } from '../plugin.ts';
import { coreServices, type ServiceRef } from '../services.ts';
import { buildKoaApp } from '../http/app.ts';
import { Drain } from '../http/drain.ts';
import { probeRoutes, Readiness } from '../http/probes.ts';
import { fileRoutes } from '../http/files.ts';
import { buildOpenApiDocument } from '../http/openapi/document.ts';
import { documentRoute, referencePage } from '../http/openapi/reference.ts';
import { answerClientErrors } from '../http/client-errors.ts';
import { startOutboxRelay } from '../billing/outbox-relay.ts';
import { startHoldRecovery } from '../billing/hold-recovery.ts';
import { startSpillRelay } from '../bus-spill.ts';
import { startBlobSweep } from '../blob-sweep.ts';
import { ServiceRegistry } from './registry.ts';
import { coreServiceFactories, selfApiRef } from './runtime.ts';
import type { CredentialVerifier } from '../http/auth.ts';
import { importFeatures } from './loader.ts';
import { engineFeaturesOf, inMatchingOrder, wireFeatures, type Wired } from './wiring.ts';
import { listen, closeServer } from './listen.ts';

export interface Platform {
  config: Config;
  /** base URL of the API listener, or null when this process has no api role */
  url: string | null;
  /** base URL of the ops listener (probes and metrics of this process's roles) */
  opsUrl: string;
  server: http.Server | null;
  /** a service of this process, as a plugin would get it (tests, the admin CLI) */
  service<T>(ref: ServiceRef<T>): Promise<T>;
  /**
   * Graceful stop: readiness false at once, stop accepting, let in-flight
   * requests, streams and worker tasks finish (cut what is left at the
   * deadline: cut streams are refunded and publish their outcome), stop the
   * consumers, close the adapters. Resolves false when the deadline forced it.
   */
  stop(): Promise<boolean>;
}

/**
 * What the kernel runs for core itself, in the api role: the billing outbox
 * relay, the recovery of charges held by a process that died, and the relay
 * of outcome events the bus refused; in the pipelines role: the sweep of
 * uploads a killed process left in the blob store.
 */
export function coreWorkers(registry: ServiceRegistry): BackgroundWorker[] {
  // Asked for when a worker starts: only the api role runs them.
  const services = async () => {
    const [documents, bus, logger, billing, config] = await Promise.all([
      registry.get(coreServices.documents, 'core'), registry.get(coreServices.bus, 'core'), registry.get(coreServices.logger, 'core'),
      registry.get(coreServices.billing, 'core'), registry.get(coreServices.config, 'core'),
    ]);
    return { documents, bus, logger, billing, config };
  };
  return [{
    name: 'core:ledger-outbox-relay',
    role: 'api',
    start: async () => {
      const { documents, bus, logger, billing } = await services();
      return startOutboxRelay({ documents, bus, logger, refund: (charge) => billing.refund(charge) });
    },
  }, {
    name: 'core:charge-hold-recovery',
    role: 'api',
    start: async () => {
      const { documents, bus, logger, billing, config } = await services();
      return startHoldRecovery({
        holds: documents.holds, instance: billing.instance, leaseMs: config.billing.holdLeaseSeconds * 1000, bus, logger,
        refund: (charge) => billing.refund(charge), retryReleases: () => billing.release([]),
      });
    },
  }, {
    name: 'core:bus-spill-relay',
    role: 'api',
    start: async () => {
      const { documents, bus, logger, config } = await services();
      return startSpillRelay({ bus, spill: documents.spill, logger, intervalMs: config.busSpillRelaySeconds * 1000 });
    },
  }, {
    name: 'core:blob-orphan-sweep',
    role: 'pipelines',
    start: async () => startBlobSweep({ blobs: await registry.get(coreServices.blobs, 'core'), logger: await registry.get(coreServices.logger, 'core') }),
  }];
}

/** Readiness of the adapters this process opened, plus the checks its features registered for its roles. */
function readinessFor(config: Config, registry: ServiceRegistry, wired: Wired): Readiness {
  const readiness = new Readiness();
  // Counters and analytics are degradable: without Redis each process counts for itself, without ClickHouse only /usage fails.
  const pinged: Array<[string, ServiceRef<{ ping(): Promise<void> }>, boolean]> = [
    ['documents', coreServices.documents, false], ['bus', coreServices.bus, false], ['counters', coreServices.counters, true],
    ['blobs', coreServices.blobs, false], ['analytics', coreServices.analytics, true],
  ];
  for (const [name, ref, degradable] of pinged) {
    readiness.add({ name, degradable, ping: true, check: async () => (await registry.built(ref))?.ping() });
  }
  for (const check of wired.readiness) {
    if (check.roles.some((r) => config.roles.includes(r))) readiness.add(check);
  }
  return readiness;
}

export async function startPlatform(config: Config, options: { metrics?: Metrics } = {}): Promise<Platform> {
  const shutdown = new AbortController();
  let deadline: number | null = null;
  const registry = new ServiceRegistry();
  const features = await importFeatures(config);
  const engineFeatures = engineFeaturesOf(features);
  let verifiers: CredentialVerifier[] = [];
  const core = coreServiceFactories(config, {
    metrics: options.metrics, lifecycle: { shuttingDown: shutdown.signal, deadline: () => deadline },
    engineFeatures: () => engineFeatures, credentialVerifiers: () => verifiers,
  });
  for (const factory of core.factories) registry.provide(factory, 'core');

  let wired: Wired;
  try {
    wired = await wireFeatures(features, registry, config.source);
  } catch (err) {
    await registry.close(() => undefined);
    await core.closeLast();
    throw err;
  }
  verifiers = wired.authenticators;
  const logger: Logger = await registry.get(coreServices.logger, 'core');
  const metrics = await registry.get(coreServices.metrics, 'core');
  const readiness = readinessFor(config, registry, wired);
  const drain = new Drain();

  let server: http.Server | null = null;
  let url: string | null = null;
  if (config.roles.includes('api')) {
    const [keys, counters, billing, bus, downloads, blobs, jobs, documents] = await Promise.all([
      registry.get(coreServices.keys, 'core'), registry.get(coreServices.counters, 'core'), registry.get(coreServices.billing, 'core'),
      registry.get(coreServices.bus, 'core'), registry.get(coreServices.downloads, 'core'), registry.get(coreServices.blobs, 'core'),
      registry.get(coreServices.jobs, 'core'), registry.get(coreServices.documents, 'core'),
    ]);
    const selfApi = await registry.get(selfApiRef, 'core');
    // The reference documents every route, its own included; built on first request, when {base_url} is known.
    const routes = [...wired.routes];
    routes.push({ ...documentRoute(() => buildOpenApiDocument({ routes, mounts: wired.mounts, plugins: [{ id: 'core', description: 'The API reference itself' }, ...wired.plugins], baseUrl: selfApi.publicBaseUrl() })), plugin: 'core' });
    const app = buildKoaApp({ config, logger, metrics, keys, counters, billing, bus, spill: documents.spill }, {
      routes: inMatchingOrder(routes),
      mounts: wired.mounts,
      coreRouters: [probeRoutes(readiness.withoutMessages(), metrics, { token: config.metricsToken }), fileRoutes({ downloads, blobs, jobs, billing, logger }), referencePage()],
      drain,
      selfCallClient: (req) => selfApi.clientOf(req),
    });
    server = http.createServer(app.callback());
    server.keepAliveTimeout = 65_000;
    answerClientErrors(server);
    drain.watch(server);
    const port = await listen(server, config.port, config.host);
    url = `http://127.0.0.1:${port}`;
    if (!config.publicBaseUrl) downloads.setBaseUrl(url);
    selfApi.bind(url);
  }

  const ops = new Koa();
  const opsRouter = probeRoutes(readiness, metrics, { open: true });
  ops.use(opsRouter.routes()).use(opsRouter.allowedMethods());
  const opsServer = http.createServer(ops.callback());
  const opsPort = await listen(opsServer, config.opsPort, config.host, 'OPS_PORT');

  const stops: Array<{ name: string; stop: () => Promise<void> }> = [];
  for (const worker of [...coreWorkers(registry), ...wired.workers]) {
    if (!config.roles.includes(worker.role)) continue;
    stops.push({ name: worker.name, stop: await worker.start() });
  }
  readiness.set(true);
  logger.info('platform started', { roles: config.roles, plugins: config.plugins, modules: config.modules, url, ops: opsPort });

  const deadlineMs = config.shutdownTimeoutSeconds * 1000;
  let stopped: Promise<boolean> | null = null;
  return {
    config,
    url,
    opsUrl: `http://127.0.0.1:${opsPort}`,
    server,
    service: (ref) => registry.get(ref, 'core'),
    stop() {
      stopped ??= (async () => {
        const started = Date.now();
        deadline = started + deadlineMs;
        const left = () => Math.max(0, deadlineMs - (Date.now() - started));
        readiness.set(false);
        shutdown.abort(new Error('shutting down'));
        drain.draining = true;
        logger.info('shutting down: draining in-flight work', { inFlight: drain.inFlight, deadlineSeconds: config.shutdownTimeoutSeconds });
        // Intake stops everywhere at once; requests and worker tasks settle side by side.
        const serverClosed = server ? closeServer(server) : Promise.resolve();
        const stillRunning = new Set(stops.map(({ name }) => name));
        const workersStopped = Promise.all([...stops].reverse().map(async ({ name, stop }) => {
          try {
            await stop();
          } catch (err) {
            logger.error('a worker did not stop cleanly', { worker: name, err: err as Error });
          } finally {
            stillRunning.delete(name);
          }
        }));
        // Leave the last quarter of the deadline (at most 5 s) for cut responses to refund and publish.
        const settleMs = Math.min(5000, deadlineMs / 4);
        let clean = await drain.idle(Math.max(0, left() - settleMs));
        // Responses the deadline ended: settled (refunded, recorded) when `clean` comes back true, so the exit stays 0, but named in the last line.
        let responsesEnded = 0;
        if (!clean) {
          responsesEnded = drain.inFlight;
          logger.warn('deadline reached: ending the responses still open; they refund what they could not deliver', { inFlight: drain.inFlight });
          // A response ended here that a slow client keeps open has its connection closed once its end had a third of the time left (at most 1 s).
          drain.interrupt(Math.min(1000, Math.max(0, left() - 500) / 3));
          clean = await drain.idle(Math.max(0, left() - 500));
        }
        const unsettled = clean ? null : drain.describe();
        server?.closeAllConnections();
        await serverClosed;
        const workersDone = await Promise.race([workersStopped.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), left()).unref())]);
        if (!workersDone) logger.error('workers did not stop before the deadline', { workers: [...stillRunning] });
        await closeServer(opsServer, true);
        await registry.close((id, err) => logger.warn('error while closing a service', { service: id, err: err as Error }));
        await core.closeLast();
        const why = [unsettled && `at the deadline: ${unsettled}`, !workersDone && `workers still running: ${[...stillRunning].join(', ')}`].filter(Boolean);
        logger.info('stopped', { clean: clean && workersDone, responsesEnded, ms: Date.now() - started, ...(why.length > 0 && { notClean: why.join('; ') }) });
        return clean && workersDone;
      })();
      return stopped;
    },
  };
}
