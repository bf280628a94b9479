import Router from '@koa/router';
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { BlobInfo, Blobs, ByteRange } from '../ports/blobs.ts';
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

/** Where the removal of a damaged file is remembered: its other links (cache hits that paid for it too) still answer 410 and refund. */
const damageMarkOf = (key: string) => `damaged/${key}`;

/** Refunds each of these jobs that paid and was not refunded yet (once per charge); whether `caller`'s own tokens came back now. */
async function refundPayers(deps: FileDeps, jobIds: Array<string | undefined>, caller: string | undefined): Promise<boolean> {
  let callerRefunded = false;
  for (const jobId of new Set(jobIds)) {
    const job = jobId ? await deps.jobs.get(jobId) : null;
    if (!job?.charge || job.refunded) continue;
    const refunded = await deps.billing.refund(job.charge);
    await deps.jobs.markRefunded(job.id);
    if (jobId === caller) callerRefunded = refunded;
  }
  return callerRefunded;
}

const damaged = (refunded: boolean) => new ApiError(410, `The audio file behind this link was damaged in storage; it has been removed${refunded ? ' and its tokens were refunded' : ''}. Submit the text again to render it afresh.`, {
  code: 'AUDIO_DAMAGED',
});

/**
 * A stored file that fails its check is never served: it is removed, the
 * jobs known to have paid for it are refunded (once per charge): the job the
 * link was handed out for (a cache hit's link names its own job, its key the
 * job that rendered the file) and the job that rendered it. The download
 * answers 410 AUDIO_DAMAGED in the native envelope, telling the caller to
 * submit again (a damaged file is never a cache hit, so that renders afresh).
 * The removal leaves a mark under the key, so that a later download through
 * another link to the same file (another cache hit that paid for it) gets the
 * same 410 and its own refund, rather than a 404 that keeps its tokens.
 */
async function discardDamagedAudio(deps: FileDeps, key: string, linkJob: string | undefined): Promise<never> {
  deps.logger.error('stored audio is damaged; removing it', { key });
  // The mark first: should the removal or a refund fail, the next download still finds the damage.
  await deps.blobs.put(damageMarkOf(key), Buffer.from(new Date().toISOString()), 'text/plain')
    .catch((err: unknown) => deps.logger.warn('damaged audio not marked', { key, err: err as Error }));
  await deps.blobs.delete(key).catch((err: unknown) => deps.logger.warn('damaged audio not removed', { key, err: err as Error }));
  const owner = OWNING_JOB.exec(key)?.[1];
  const caller = linkJob ?? owner;
  throw damaged(await refundPayers(deps, [caller, owner], caller));
}

/** A file removed as damaged: this link's job is refunded if it paid (once), and the answer is the same 410. */
async function answerRemovedAsDamaged(deps: FileDeps, key: string, linkJob: string | undefined): Promise<void> {
  if (!(await deps.blobs.exists(damageMarkOf(key)))) return;
  const caller = linkJob ?? OWNING_JOB.exec(key)?.[1];
  throw damaged(await refundPayers(deps, [caller], caller));
}

/**
 * Byte ranges (RFC 9110 §14), single range only. `Range: bytes=a-b`, `bytes=a-`
 * and `bytes=-n` answer 206 with `Content-Range: bytes a-b/size`; a range that
 * starts at or past the end (or `bytes=-0`) is 416 RANGE_NOT_SATISFIABLE in
 * the native envelope, its Content-Range giving the size alone (`bytes *`,
 * a slash, the size). Anything else (bad syntax, another unit, several
 * ranges) is ignored: the whole file with 200, as the RFC allows. HEAD
 * ignores Range (range handling is defined for GET only, §14.2).
 * A key can be written again (a put replaces the blob), so every answer
 * carries a strong ETag of the stored version and `If-Range` is honoured
 * against it: a Range is applied only when If-Range is absent or names that
 * ETag (a date or a weak tag never matches: no Last-Modified is sent).
 */
type RangeAnswer = { kind: 'whole' } | { kind: 'partial'; range: ByteRange } | { kind: 'unsatisfiable' };

const SINGLE_BYTE_RANGE = /^bytes=(\d*)-(\d*)$/i;

function resolveRange(header: string | undefined, size: number): RangeAnswer {
  const match = header === undefined ? null : SINGLE_BYTE_RANGE.exec(header.trim());
  if (!match) return { kind: 'whole' };
  const [, first = '', last = ''] = match;
  if (first === '') {
    if (last === '') return { kind: 'whole' };
    const suffix = Number(last);
    if (suffix === 0) return { kind: 'unsatisfiable' };
    // An empty file has no bytes to name in a Content-Range: it goes whole.
    if (size === 0) return { kind: 'whole' };
    return { kind: 'partial', range: { start: Math.max(0, size - suffix), end: size - 1 } };
  }
  const start = Number(first);
  const end = last === '' ? Infinity : Number(last);
  if (end < start) return { kind: 'whole' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'partial', range: { start, end: Math.min(end, size - 1) } };
}

/** A strong validator of the stored version: it changes when the key is written again. */
function etagOf(info: BlobInfo): string {
  const digest = createHash('sha256').update(JSON.stringify([info.key, info.size, info.version ?? null])).digest('base64url');
  return `"${digest.slice(0, 27)}"`;
}

/** If-Range (RFC 9110 §13.1.5): absent, or the exact current ETag (strong comparison). */
function ifRangeHolds(ifRange: string | undefined, etag: string): boolean {
  return ifRange === undefined || ifRange.trim() === etag;
}

const sameVersion = (a: BlobInfo, b: BlobInfo) => a.size === b.size && a.version === b.version;

/**
 * The blob's `range`, from the version `whole` was opened at. When the key
 * was written again between the two opens, the range no longer means the same
 * bytes: the new version is served whole (null range) instead.
 */
async function openRange(blobs: Blobs, key: string, whole: { info: BlobInfo; stream: Readable }, range: ByteRange) {
  if (range.start === 0 && range.end === whole.info.size - 1) return { blob: whole, range };
  whole.stream.destroy();
  let part: { info: BlobInfo; stream: Readable } | null;
  try {
    part = await blobs.open(key, range);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    part = null; // the new version is too short for the range
  }
  if (part && sameVersion(part.info, whole.info)) return { blob: part, range };
  part?.stream.destroy();
  return { blob: await blobs.open(key), range: null };
}

const gone = () => new ApiError(404, 'The file behind this link no longer exists.', { code: 'FILE_NOT_FOUND' });

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
    if (state === 'missing') await answerRemovedAsDamaged(deps, key, job);
    const opened = state === 'ok' ? await deps.blobs.open(key) : null;
    if (!opened) throw gone();
    let blob: { info: BlobInfo; stream: Readable } | null = opened;
    let range: ByteRange | null = null;
    // Range handling is defined for GET only (RFC 9110 §14.2): a HEAD answers as a whole-file GET would.
    const wanted = ctx.method === 'GET' && ifRangeHolds(ctx.get('If-Range') || undefined, etagOf(opened.info))
      ? resolveRange(ctx.get('Range') || undefined, opened.info.size) : { kind: 'whole' as const };
    if (wanted.kind === 'unsatisfiable') {
      opened.stream.destroy();
      const size = opened.info.size;
      const within = size > 0 ? `ask for bytes 0 to ${size - 1}, or for` : 'ask for';
      throw new ApiError(416, `The requested byte range is outside this file, which is ${size} byte${size === 1 ? '' : 's'} long: ${within} the whole file without a Range header.`, {
        code: 'RANGE_NOT_SATISFIABLE', headers: { 'Content-Range': `bytes */${size}`, 'Accept-Ranges': 'bytes' },
      });
    }
    if (wanted.kind === 'partial') ({ blob, range } = await openRange(deps.blobs, key, opened, wanted.range));
    if (!blob) throw gone();
    ctx.type = blob.info.contentType;
    ctx.set('Accept-Ranges', 'bytes');
    ctx.set('ETag', etagOf(blob.info));
    ctx.set('Cache-Control', 'private, max-age=3600');
    ctx.body = blob.stream;
    if (range) {
      ctx.status = 206;
      ctx.set('Content-Range', `bytes ${range.start}-${range.end}/${blob.info.size}`);
      ctx.length = range.end - range.start + 1;
    } else {
      ctx.length = blob.info.size;
    }
  });
  return router;
}
