import Router from '@koa/router';
import type { CoreServices } from '../plugin.ts';
import { ApiError } from '../errors.ts';
import { inspectStoredAudio } from '../speechkit/audio/stored.ts';

const READY_TIMEOUT_MS = 2000;

async function check(name: string, ping: () => Promise<void>): Promise<[string, string]> {
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timed out')), READY_TIMEOUT_MS).unref());
  try {
    await Promise.race([ping(), timeout]);
    return [name, 'ok'];
  } catch (err) {
    return [name, `unreachable: ${(err as Error).message}`];
  }
}

/** Blob keys that name the job whose audio they hold: `jobs/<id>.wav` (rendered) and `speech/<id>.<ext>` (saved copies). */
const OWNING_JOB = /^(?:jobs|speech)\/(job_[0-9a-f-]{36})\.[a-z0-9]+$/;

/**
 * A stored file that fails its check is never served: it is removed, the
 * job that paid for it is refunded (once per charge), and the download
 * answers 410 AUDIO_DAMAGED in the native envelope, telling the caller to
 * submit again (a damaged file is never a cache hit, so that renders afresh).
 */
async function discardDamagedAudio(services: CoreServices, key: string): Promise<never> {
  services.logger.error('stored audio is damaged; removing it', { key });
  await services.blobs.delete(key).catch((err: unknown) => services.logger.warn('damaged audio not removed', { key, err: err as Error }));
  const jobId = OWNING_JOB.exec(key)?.[1];
  const job = jobId ? await services.documents.jobs.get(jobId) : null;
  let refunded = false;
  if (job?.charge && !job.refunded) {
    refunded = await services.billing.refund(job.charge);
    await services.documents.jobs.markRefunded(job.id);
  }
  const paid = refunded ? ' and its tokens were refunded' : '';
  throw new ApiError(410, `The audio file behind this link was damaged in storage; it has been removed${paid}. Submit the text again to render it afresh.`, {
    code: 'AUDIO_DAMAGED',
  });
}

/** Routes core serves for every deployment: probes, metrics and signed downloads. */
export function coreRoutes(services: CoreServices): Router {
  const router = new Router();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    const results = await Promise.all([
      check('documents', () => services.documents.ping()),
      check('bus', () => services.bus.ping()),
      check('counters', () => services.counters.ping()),
      check('blobs', () => services.blobs.ping()),
      check('analytics', () => services.analytics.ping()),
      check('engine', () => services.engine.ping()),
    ]);
    const adapters = Object.fromEntries(results);
    const ready = results.every(([, s]) => s === 'ok');
    ctx.status = ready ? 200 : 503;
    ctx.body = { status: ready ? 'ready' : 'not_ready', adapters };
  });
  router.get('/metrics', async (ctx) => {
    ctx.type = services.metrics.registry.contentType;
    ctx.body = await services.metrics.registry.metrics();
  });
  router.get('/files/*key', async (ctx) => {
    const raw = ctx.params.key as unknown;
    const key = Array.isArray(raw) ? raw.join('/') : String(raw);
    const { expires, signature } = ctx.query;
    if (typeof expires !== 'string' || typeof signature !== 'string' || !services.downloads.verify(key, expires, signature)) {
      throw new ApiError(403, 'This download link is invalid or has expired. Request a fresh link.', { code: 'LINK_EXPIRED' });
    }
    const state = await inspectStoredAudio(services.blobs, key);
    if (state === 'corrupt') await discardDamagedAudio(services, key);
    const blob = state === 'ok' ? await services.blobs.open(key) : null;
    if (!blob) throw new ApiError(404, 'The file behind this link no longer exists.', { code: 'FILE_NOT_FOUND' });
    ctx.type = blob.info.contentType;
    ctx.length = blob.info.size;
    ctx.set('Cache-Control', 'private, max-age=3600');
    ctx.body = blob.stream;
  });
  return router;
}
