import Joi from 'joi';
import { definePlugin } from '../../core/plugin.ts';
import { coreServices } from '../../core/services.ts';
import { TOPICS } from '../../core/ports/bus.ts';
import { createJobsService } from './service.ts';
import { registerJobRoutes } from './routes.ts';
import { createJobPublisher, startJobRecovery } from './publication.ts';

interface JobsConfig {
  JOBS_RECOVERY_INTERVAL_SECONDS: number;
  JOBS_REPUBLISH_AFTER_SECONDS: number;
  JOBS_OUTCOME_REPUBLISH_AFTER_SECONDS: number;
  JOBS_SUBMISSION_TIMEOUT_SECONDS: number;
}

/** Asynchronous jobs: `POST /tts`, `GET /tts/{jobId}`, `GET /tts?ids=`. Rendering is the inference module's worker. */
export default definePlugin({
  id: 'jobs',
  version: '2.1.0',
  coreApi: 2,
  description: 'Asynchronous TTS jobs with idempotency, content cache, atomic submission and queue limits',
  engineFeatures: ['generate', 'clone'],
  config: Joi.object<JobsConfig>({
    JOBS_RECOVERY_INTERVAL_SECONDS: Joi.number().min(0.1).max(3600).default(10),
    JOBS_REPUBLISH_AFTER_SECONDS: Joi.number().min(0).max(3600).default(10),
    // Past the bus's 120-s publish deadline: a live process has published (or spilled) its accept's outcome by then.
    JOBS_OUTCOME_REPUBLISH_AFTER_SECONDS: Joi.number().min(0).max(86_400).default(150),
    JOBS_SUBMISSION_TIMEOUT_SECONDS: Joi.number().min(1).max(86_400).default(60),
  }),
  deps: {
    jobs: coreServices.jobs,
    catalog: coreServices.catalog,
    billing: coreServices.billing,
    blobs: coreServices.blobs,
    downloads: coreServices.downloads,
    publisher: coreServices.publisher([TOPICS.jobs, TOPICS.outcomes]),
    counters: coreServices.counters,
    config: coreServices.config,
    logger: coreServices.logger,
    metrics: coreServices.metrics,
  },
  register({ deps, config, route, worker }) {
    deps.metrics.registerCollector(async () => deps.metrics.queueDepth.set(await deps.jobs.countActive()));
    const jobPublisher = createJobPublisher(deps);
    registerJobRoutes(route, deps.counters.idempotency, createJobsService({ ...deps, jobPublisher }), deps.logger);
    worker({
      name: 'jobs-recovery',
      role: 'api',
      start: async () => {
        const loop = startJobRecovery(deps, {
          intervalMs: config.JOBS_RECOVERY_INTERVAL_SECONDS * 1000,
          republishAfterMs: config.JOBS_REPUBLISH_AFTER_SECONDS * 1000,
          outcomeAfterMs: config.JOBS_OUTCOME_REPUBLISH_AFTER_SECONDS * 1000,
          submissionTimeoutMs: config.JOBS_SUBMISSION_TIMEOUT_SECONDS * 1000,
        });
        return () => loop.stop();
      },
    });
  },
});
