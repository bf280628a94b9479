/**
 * The copy `POST /audio/speech` keeps of a non-streaming response (SPEC:
 * `X-Service-Job-Id`). The job record exists before the first byte is sent,
 * the encoded bytes are written to storage as they go to the client, and
 * the job completes with a link to the very same audio. Storage trouble
 * never breaks a streamed response: the copy's job fails instead.
 *
 * A WAV is different: a whole WAV must carry its true RIFF and data sizes,
 * which are known only at the end. Its samples go to a scratch blob first;
 * `sealWav` then writes the WAV (exact header, then the samples) as the copy,
 * and the response is served from it, with a Content-Length.
 */
import { randomUUID, hash } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type { Blobs } from '../../core/ports/blobs.ts';
import type { JobRecord, JobsStore } from '../../core/ports/jobs.ts';
import type { Charge } from '../../core/billing/service.ts';
import type { Logger } from '../../core/logger.ts';
import { Readable } from 'node:stream';
import { CONTENT_TYPES, type AudioFormat } from '../../core/speechkit/audio/index.ts';
import { wavHeader } from '../../core/speechkit/audio/wav.ts';

const EXTENSIONS: Record<AudioFormat, string> = { mp3: 'mp3', opus: 'ogg', wav: 'wav', pcm: 'pcm', ulaw: 'ulaw' };

export interface SavedCopyInput {
  accountId: string;
  keyId: string;
  text: string;
  voiceId: string;
  voiceName: string;
  engine: string;
  speed: number;
  aiRefine: boolean;
  characters: number;
  charge: Charge;
  format: AudioFormat;
  sampleRate: number;
}

export interface SavedCopyDeps {
  jobs: JobsStore;
  blobs: Blobs;
  logger: Logger;
  /** how long the copy's keep-alive lasts unless renewed (default COPY_KEEP_ALIVE_MS); renewed every fifth of it */
  keepAliveMs?: number;
  /** renewed no more past this (default COPY_MAX_LIFETIME_MS) */
  maxLifetimeMs?: number;
}

/**
 * A copy is `processing` for as long as its response streams, which may be
 * hours (50,000 characters read slowly at half speed). Its process renews
 * the copy's keep-alive (the job's lease, owner `saved-copy`) while it does;
 * one that lapsed is a process that died, and the sweeper fails its copy.
 */
export const COPY_KEEP_ALIVE_MS = 5 * 60 * 1000;
const COPY_OWNER = 'saved-copy';
/** No response lasts longer (50,000 characters at half speed is about two hours): a copy still open then is renewed no more. */
export const COPY_MAX_LIFETIME_MS = 4 * 3600 * 1000;

export class SavedCopy {
  private readonly body = new PassThrough();
  private readonly stored: Promise<boolean>;
  private broken = false;
  /** why storage failed, when it did: an outage (a full disk, GridFS out of reach) is a 503 for a whole WAV */
  storageError: unknown = null;
  /** WAV only: where the samples wait until their count is known */
  private readonly scratchKey: string | null;
  private bytes = 0;
  private readonly keepAlive: NodeJS.Timeout;

  private constructor(private readonly deps: SavedCopyDeps, readonly jobId: string, private readonly audioKey: string, private readonly contentType: string) {
    const lease = deps.keepAliveMs ?? COPY_KEEP_ALIVE_MS;
    const startedAt = Date.now();
    this.keepAlive = setInterval(() => {
      if (Date.now() - startedAt > (deps.maxLifetimeMs ?? COPY_MAX_LIFETIME_MS)) return void clearInterval(this.keepAlive);
      deps.jobs.renewLease(jobId, COPY_OWNER, new Date(Date.now() + lease).toISOString())
        .catch((err: unknown) => deps.logger.warn('saved copy keep-alive not renewed', { jobId, err: err as Error }));
    }, lease / 5);
    this.keepAlive.unref();
    this.scratchKey = contentType === CONTENT_TYPES.wav ? `${audioKey}.pcm.part` : null;
    // `fail` may destroy the body before storage has attached to it; storage reports its own outcome through `stored`.
    this.body.on('error', () => undefined);
    this.stored = deps.blobs.put(this.scratchKey ?? audioKey, this.body, this.scratchKey ? 'application/octet-stream' : contentType).then(
      () => true,
      (err: unknown) => {
        if (!this.broken) deps.logger.warn('saved copy could not be stored', { jobId, err: err as Error });
        this.storageError ??= err;
        this.broken = true;
        return false;
      },
    );
  }

  /** Records the job (status processing) and opens its storage. */
  static async start(deps: SavedCopyDeps, input: SavedCopyInput): Promise<SavedCopy> {
    const jobId = 'job_' + randomUUID();
    const now = new Date().toISOString();
    const job: JobRecord = {
      id: jobId, accountId: input.accountId, keyId: input.keyId, status: 'processing', source: 'audio_speech', text: input.text,
      voiceId: input.voiceId, voiceName: input.voiceName, engine: input.engine, emotion: 'natural', speed: input.speed,
      aiRefine: input.aiRefine, textLength: input.characters, cacheKey: copyKey(input), charge: input.charge, audioKey: null,
      durationSeconds: null, processingMs: null, attempts: 1, leaseOwner: COPY_OWNER,
      leaseUntil: new Date(Date.now() + (deps.keepAliveMs ?? COPY_KEEP_ALIVE_MS)).toISOString(), errorCode: null, error: null,
      refunded: false, createdAt: now, startedAt: now, completedAt: null,
    };
    await deps.jobs.create(job);
    return new SavedCopy(deps, jobId, `speech/${jobId}.${EXTENSIONS[input.format]}`, CONTENT_TYPES[input.format]);
  }

  /** Takes the next encoded bytes (WAV: raw samples), waiting while storage is slower than the client. */
  async write(bytes: Buffer): Promise<void> {
    this.bytes += bytes.length;
    if (this.broken || this.body.write(bytes)) return;
    await Promise.race([new Promise((resolve) => this.body.once('drain', resolve)), this.stored]);
  }

  /**
   * WAV only: the samples are all in; stores the WAV with its exact sizes and
   * opens it for the response. Null when storage failed (the response cannot be served whole).
   */
  async sealWav(sampleRate: number): Promise<{ size: number; stream: Readable } | null> {
    if (!this.scratchKey) throw new Error('sealWav is for WAV copies');
    this.body.end();
    if (!(await this.stored)) return null;
    try {
      const scratch = await this.deps.blobs.open(this.scratchKey);
      if (!scratch) throw new Error(`scratch audio ${this.scratchKey} vanished`);
      const header = wavHeader(this.bytes, sampleRate);
      await this.deps.blobs.put(this.audioKey, Readable.from(withHeader(header, scratch.stream)), this.contentType);
      const sealed = await this.deps.blobs.open(this.audioKey);
      if (!sealed) throw new Error(`saved WAV ${this.audioKey} vanished`);
      return { size: sealed.info.size, stream: sealed.stream };
    } catch (err) {
      this.deps.logger.warn('saved WAV could not be written', { jobId: this.jobId, err: err as Error });
      this.storageError ??= err;
      this.broken = true;
      return null;
    } finally {
      await this.deps.blobs.delete(this.scratchKey).catch(() => undefined);
    }
  }

  /** The response was complete: the job completes with a link to the same bytes. */
  async complete(durationSeconds: number, processingMs: number): Promise<void> {
    clearInterval(this.keepAlive);
    this.body.end();
    if (!(await this.stored) || this.broken) {
      await this.fail('synthesis_failed', 'The audio was delivered, but its copy could not be saved.', false);
      return;
    }
    const completed = await this.deps.jobs.complete(this.jobId, { audioKey: this.audioKey, durationSeconds, processingMs, completedAt: new Date().toISOString() });
    if (!completed) {
      // Already failed (its keep-alive lapsed while this process stalled): no job points at the file, so it goes.
      this.deps.logger.warn('saved copy had already been failed; its audio is deleted', { jobId: this.jobId });
      await this.deps.blobs.delete(this.audioKey).catch(() => undefined);
    }
  }

  /** The response was cut short or abandoned by the client: no copy is kept. */
  async fail(errorCode: string, message: string, refunded: boolean): Promise<void> {
    clearInterval(this.keepAlive);
    this.broken = true;
    this.body.destroy(new Error(message));
    await this.stored;
    await this.deps.blobs.delete(this.audioKey).catch(() => undefined);
    if (this.scratchKey) await this.deps.blobs.delete(this.scratchKey).catch(() => undefined);
    await this.deps.jobs.fail(this.jobId, { errorCode, error: message, completedAt: new Date().toISOString() });
    if (refunded) await this.deps.jobs.markRefunded(this.jobId);
  }
}

async function* withHeader(header: Buffer, body: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  yield header;
  yield* body;
}

/** Identifies what the copy holds; copies are never served from the `POST /tts` content cache. */
function copyKey(input: SavedCopyInput): string {
  return hash('sha256', JSON.stringify(['audio_speech', input.engine, input.voiceId, input.speed, input.format, input.sampleRate, input.text.normalize('NFC')]));
}
