/**
 * Renders one queued `POST /tts` job to a stored WAV for the inference worker, and
 * sorts render failures into the job failure codes of `tts.job.failed`:
 * retryable (engine or encoder briefly unavailable, a timeout) or final
 * (moderation, a voice that no longer resolves, a broken voice model).
 */
import type { Config } from '../config/load.ts';
import type { SpeechEngine } from '../core/ports/engine.ts';
import type { VoiceCatalog } from '../core/catalog.ts';
import type { Blobs } from '../core/ports/blobs.ts';
import type { JobRecord } from '../core/ports/jobs.ts';
import type { JobFailedEvent } from '../core/ports/job-events.ts';
import { EngineUnavailableError } from '../core/ports/engine.ts';
import { DomainError, isRefusal } from '../core/errors.ts';
import { PassThrough, Readable } from 'node:stream';
import { wavHeader } from '../core/speechkit/audio/wav.ts';
import { abandonedWrite, writeWithBackPressure } from '../core/speechkit/audio/back-pressure.ts';
import { EncoderUnavailableError } from '../core/speechkit/audio/ffmpeg.ts';
import { isAbortError } from '../core/speechkit/abort.ts';
import { isUnreachableDependency } from '../core/unreachable.ts';
import { VoiceConfigError } from './engines/piper-config.ts';
import { ModerationRefusal } from '../core/speechkit/text/moderation.ts';
import { speechTextOffLoop } from '../core/speechkit/text/speech-text-request.ts';

/** Jobs are stored as 48 kHz WAV, the service's default rate (SPEC "What the service does"). */
export const JOB_SAMPLE_RATE = 48000;

/**
 * A job whose text has nothing to speak, or whose engine returned no samples:
 * final, and refunded like any failure (SPEC billing rule 3: no audio, no charge).
 */
export class NoAudioError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoAudioError';
  }
}

/** The job's text as the engine reads it, prepared off the event loop; refusals become final failures. */
async function jobText(job: JobRecord, moderationTerms: readonly string[]): Promise<string> {
  const outcome = await speechTextOffLoop({ text: job.text, aiRefine: job.aiRefine, moderationTerms, sourceCharacters: job.textLength });
  if (outcome.kind === 'moderation') throw new ModerationRefusal([]);
  if (outcome.kind === 'expansion') throw new RangeError(`the text would be read as ${outcome.characters} characters, over the limit of ${outcome.limit}`);
  if (outcome.kind !== 'ok' || outcome.chunks.length === 0) throw new NoAudioError('The text contains nothing that can be spoken.');
  return outcome.text;
}

export interface RenderedJobAudio {
  /** blob key of the finished WAV */
  audioKey: string;
  durationSeconds: number;
}

/**
 * Renders a job into the blobs port as a 48 kHz WAV with bounded memory: PCM
 * streams into a scratch blob as the engine produces it, then the WAV is
 * streamed from its header (whose size is only known at the end) and the
 * scratch blob. A 50,000-character job never sits whole in memory.
 */
export async function renderJobToBlob(
  services: { engine: SpeechEngine; catalog: VoiceCatalog; config: Config; blobs: Blobs },
  job: JobRecord,
  audioKey: string,
  options: { signal?: AbortSignal } = {},
): Promise<RenderedJobAudio> {
  const voice = await services.catalog.resolve({
    voice: job.voiceId, engine: job.engine, accountId: job.accountId, allowClones: true, param: 'voiceId',
  });
  const text = await jobText(job, services.config.moderationTerms);
  const scratchKey = `${audioKey}.pcm.part`;
  const pcm = new PassThrough();
  const stored = services.blobs.put(scratchKey, pcm, 'application/octet-stream');
  // A failed store surfaces through the write (the stream closes); keep it from going unhandled meanwhile.
  stored.catch(() => undefined);
  let bytes = 0;
  try {
    const request = { text, voice, speed: job.speed, sampleRate: JOB_SAMPLE_RATE, signal: options.signal };
    for await (const chunk of services.engine.synthesize(request)) {
      bytes += chunk.pcm.length;
      await writeWithBackPressure(pcm, chunk.pcm);
    }
    if (bytes === 0) throw new NoAudioError('The engine produced no audio for this text.');
    pcm.end();
    await stored;
    const scratch = await services.blobs.open(scratchKey);
    if (!scratch) throw new Error(`scratch audio ${scratchKey} vanished before the WAV was written`);
    await services.blobs.put(audioKey, Readable.from(withHeader(wavHeader(bytes, JOB_SAMPLE_RATE), scratch.stream)), 'audio/wav');
  } catch (err) {
    throw await abandonedWrite(pcm, stored, err);
  } finally {
    await services.blobs.delete(scratchKey).catch(() => undefined);
  }
  return { audioKey, durationSeconds: bytes / 2 / JOB_SAMPLE_RATE };
}

async function* withHeader(header: Buffer, body: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  yield header;
  yield* body;
}

export interface RenderFailure {
  code: JobFailedEvent['error']['code'];
  message: string;
  retryable: boolean;
  /**
   * the store or disk the audio goes to could not be reached or take the
   * write: nothing wrong with the job, which waits for it without using up
   * its attempts (inference/worker.ts)
   */
  outage?: true;
}

/**
 * What a failed job tells its owner (`GET /tts/{id}`, the `tts.job.failed`
 * webhook). Engine, storage and process errors carry host names, file paths
 * and stderr; those go to the log, and the job gets one of these instead.
 * Only messages written for the caller (a refusal, nothing to speak) pass.
 */
const PUBLIC_MESSAGES = {
  synthesis_unavailable: 'No speech engine could render this job. Submit the text again in a few minutes.',
  synthesis_timeout: 'Rendering took too long and was stopped. Submit the text again.',
  synthesis_failed: 'Synthesis failed. Submit the text again; if it keeps failing, contact support with the job id.',
} as const;

export function classifyRenderError(err: unknown): RenderFailure {
  if (err instanceof ModerationRefusal || (err instanceof DomainError && err.kind === 'unprocessable')) {
    return { code: 'content_rejected', message: 'The text was refused by content moderation.', retryable: false };
  }
  if (err instanceof NoAudioError) return { code: 'synthesis_failed', message: err.message, retryable: false };
  if (err instanceof VoiceConfigError) return { code: 'synthesis_unavailable', message: PUBLIC_MESSAGES.synthesis_unavailable, retryable: false };
  if (err instanceof EngineUnavailableError || err instanceof EncoderUnavailableError) {
    return { code: 'synthesis_unavailable', message: PUBLIC_MESSAGES.synthesis_unavailable, retryable: true };
  }
  if (isAbortError(err) || (err instanceof Error && err.name === 'TimeoutError')) {
    return { code: 'synthesis_timeout', message: PUBLIC_MESSAGES.synthesis_timeout, retryable: true };
  }
  if (isUnreachableDependency(err)) return { code: 'synthesis_unavailable', message: PUBLIC_MESSAGES.synthesis_unavailable, retryable: true, outage: true };
  // A voice that no longer resolves or a request the engine refuses will not get better on retry.
  if (isRefusal(err)) return { code: 'synthesis_failed', message: (err as Error).message, retryable: false };
  if (err instanceof RangeError) return { code: 'synthesis_failed', message: PUBLIC_MESSAGES.synthesis_failed, retryable: false };
  return { code: 'synthesis_failed', message: PUBLIC_MESSAGES.synthesis_failed, retryable: true };
}
