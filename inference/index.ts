import { definePlugin } from '../core/plugin.ts';
import { coreServices, createServiceFactory } from '../core/services.ts';
import { createEngine } from './engines/factory.ts';
import { startInferenceWorker } from './worker.ts';
import { startInferenceEndpoint } from './endpoint.ts';
import { cachedHealth } from './health.ts';

/** How often readiness re-asks the engine; between asks it reports the last answer. */
const ENGINE_HEALTH_MAX_AGE_MS = 15_000;

/**
 * The inference module. It provides the engine service every process uses
 * (in-process espeak-ng and ONNX voices, or the remote inference service when
 * INFERENCE_URL is set and this process is not the inference role), and in
 * the inference role runs the `tts.jobs` consumer group and the internal
 * streaming endpoint.
 */
export default definePlugin({
  id: 'inference',
  version: '2.0.0',
  coreApi: 2,
  description: 'Speech engines, the job render worker and the internal synthesis endpoint',
  provides: [
    createServiceFactory({
      ref: coreServices.engine,
      deps: { config: coreServices.config, logger: coreServices.logger },
      create: ({ config, logger }) => createEngine(config, logger),
      close: (engine) => engine.close(),
    }),
  ],
  deps: {
    config: coreServices.config,
    engine: coreServices.engine,
    jobs: coreServices.jobs,
    bus: coreServices.bus,
    blobs: coreServices.blobs,
    billing: coreServices.billing,
    catalog: coreServices.catalog,
    logger: coreServices.logger,
    metrics: coreServices.metrics,
    lifecycle: coreServices.lifecycle,
  },
  register({ deps, worker, readiness }) {
    readiness({ name: 'engine', roles: ['api', 'inference'], check: cachedHealth(() => deps.engine.ping(), ENGINE_HEALTH_MAX_AGE_MS) });
    worker({
      name: 'worker',
      role: 'inference',
      start: async () => {
        const { concurrency, jobMaxAttempts, leaseSeconds, retryBaseMs } = deps.config.inference;
        const subscription = await startInferenceWorker(deps, { concurrency, maxAttempts: jobMaxAttempts, leaseSeconds, retryBaseMs });
        return () => subscription.stop();
      },
    });
    worker({ name: 'endpoint', role: 'inference', start: () => startInferenceEndpoint(deps) });
    // Said once at start, in the log a person reads first: otherwise a missing espeak-ng showed only on /readyz
    // and as 503s that say "retry shortly". Not a start-up failure: readiness keeps reporting it, and it may be fixed live.
    worker({
      name: 'engine-check',
      role: 'inference',
      start: async () => {
        deps.engine.ping().catch((err: unknown) => {
          deps.logger.error('the speech engine is not usable; speech requests answer 503 until it is (install espeak-ng: apt-get install espeak-ng)', { err: err as Error });
        });
        return async () => {};
      },
    });
  },
});
