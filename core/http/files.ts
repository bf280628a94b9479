import Router from '@koa/router';
import type { Blobs } from '../ports/blobs.ts';
import type { JobsStore } from '../ports/jobs.ts';
import type { DownloadLinks } from '../downloads.ts';
import type { BillingService } from '../billing/service.ts';
import type { Logger } from '../logger.ts';
import { ApiError } from '../errors.ts';
import { inspectStoredAudio } from '../speechkit/audio/stored.ts';

export interface FileDeps {
  downloads: DownloadLinks;
  blobs: Blobs;
  jobs: JobsStore;
  billing: BillingService;
  logger: Logger;
}

/** Blob keys that name the job whose audio they hold: `jobs/<id>.wav` (rendered) and `speech/<id>.<ext>` (saved copies). */
const OWNING_JOB = /^(?:jobs|speech)\/(job_[0-9a-f-]{36})\.[a-z0-9]+$/;

/**
 * A stored file that fails its check is never served: it is removed, the
 * jobs known to have paid for it are refunded (once per charge): the job the
 * link was handed out for (a cache hit's link names its own job, its key the
 * job that rendered the file) and the job that rendered it. The download
 * answers 410 AUDIO_DAMAGED in the native envelope, telling the caller to
 * submit again (a damaged file is never a cache hit, so that renders afresh).
 */
async function discardDamagedAudio(deps: FileDeps, key: string, linkJob: string | undefined): Promise<never> {
  deps.logger.error('stored audio is damaged; removing it', { key });
  await deps.blobs.delete(key).catch((err: unknown) => deps.logger.warn('damaged audio not removed', { key, err: err as Error }));
  const owner = OWNING_JOB.exec(key)?.[1];
  const caller = linkJob ?? owner;
  let callerRefunded = false;
  for (const jobId of new Set([caller, owner])) {
    const job = jobId ? await deps.jobs.get(jobId) : null;
    if (!job?.charge || job.refunded) continue;
    const refunded = await deps.billing.refund(job.charge);
    await deps.jobs.markRefunded(job.id);
    if (jobId === caller) callerRefunded = refunded;
  }
  const paid = callerRefunded ? ' and its tokens were refunded' : '';
  throw new ApiError(410, `The audio file behind this link was damaged in storage; it has been removed${paid}. Submit the text again to render it afresh.`, {
    code: 'AUDIO_DAMAGED',
  });
}

/** `GET /files/<key>?expires=&signature=[&job=]`: presigned downloads, whatever adapter stores the blob. */
export function fileRoutes(deps: FileDeps): Router {
  const router = new Router();
  router.get('/files/*key', async (ctx) => {
    const raw = ctx.params.key as unknown;
    const key = Array.isArray(raw) ? raw.join('/') : String(raw);
    const { expires, signature, job } = ctx.query;
    if (typeof expires !== 'string' || typeof signature !== 'string' || Array.isArray(job)
      || !deps.downloads.verify(key, expires, signature, { job })) {
      throw new ApiError(403, 'This download link is invalid or has expired. Request a fresh link.', { code: 'LINK_EXPIRED' });
    }
    const state = await inspectStoredAudio(deps.blobs, key);
    if (state === 'corrupt') await discardDamagedAudio(deps, key, job);
    const blob = state === 'ok' ? await deps.blobs.open(key) : null;
    if (!blob) throw new ApiError(404, 'The file behind this link no longer exists.', { code: 'FILE_NOT_FOUND' });
    ctx.type = blob.info.contentType;
    ctx.length = blob.info.size;
    ctx.set('Cache-Control', 'private, max-age=3600');
    ctx.body = blob.stream;
  });
  return router;
}
