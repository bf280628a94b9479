/**
 * Text preparation as request handlers and the job worker use it: short
 * texts are prepared inline (cheaper than a thread hop), long ones in the
 * worker pool so no request stalls the event loop; outcomes become the API's
 * refusals. Every refusal here comes before any charge.
 */
import { availableParallelism } from 'node:os';
import { DomainError } from '../../errors.ts';
import { MODERATION_MESSAGE } from './refine.ts';
import { speechText, type SpeechTextInput, type SpeechTextOutcome } from './speech-text.ts';
import { PoolBusyError, WorkerPool } from '../worker-pool.ts';
import { siblingModule } from '../module-url.ts';
import type { PreparedText } from './prepare.ts';
import { MAX_EXPANSION } from './prepare.ts';
import { cueOfChunk } from './cues.ts';

/** Texts at least this long (UTF-16 units) are prepared off the event loop; below it the worst case is a few ms. */
export const OFF_THREAD_MIN_LENGTH = 1_000;

/** The pool's module; exported so the compiled build's test can check it is there. */
export const PREPARE_WORKER = siblingModule(import.meta.url, 'prepare-worker');

let pool: WorkerPool<SpeechTextInput, SpeechTextOutcome> | null = null;

/**
 * One pool per process, made on first use: preparation is pure CPU, like
 * libuv's thread pool, and idle workers are unref'd so they never hold a
 * process (or a test run) open. One core is left to the event loop.
 */
function sharedPool(): WorkerPool<SpeechTextInput, SpeechTextOutcome> {
  pool ??= new WorkerPool({
    script: PREPARE_WORKER,
    size: Math.max(1, Math.min(4, availableParallelism() - 1)),
    maxQueue: 1_000,
    taskTimeoutMs: 20_000,
  });
  return pool;
}

/** Runs preparation off the event loop for long texts; a pool that cannot start falls back to inline work. */
export async function speechTextOffLoop(input: SpeechTextInput): Promise<SpeechTextOutcome> {
  if (input.text.length < OFF_THREAD_MIN_LENGTH) return speechText(input);
  try {
    return await sharedPool().run(input);
  } catch (err) {
    if (err instanceof PoolBusyError) {
      throw new DomainError('unavailable', 'The service is preparing too many long texts right now. Retry in a second; nothing was charged.', {
        retryAfterSeconds: 1, usageCode: 'synthesis_unavailable',
      });
    }
    return speechText(input);
  }
}

export interface SpeechTextRequest {
  text: string;
  aiRefine: boolean;
  moderationTerms: readonly string[];
  sourceCharacters: number;
  /** request field named in refusals */
  param: string;
}

/** The refusals every preparation outcome may carry: 422 moderation (aiRefine only), 400 TEXT_EXPANSION_LIMIT. */
function refuseIfRefused(outcome: SpeechTextOutcome, param: string): void {
  if (outcome.kind === 'moderation') {
    throw new DomainError('unprocessable', MODERATION_MESSAGE, { code: 'CONTENT_REJECTED' });
  }
  if (outcome.kind === 'expansion') {
    throw new DomainError('invalid', `"${param}" would be read as ${outcome.characters} characters, more than ${MAX_EXPANSION} times what it bills (limit ${outcome.limit}). Write the figures or symbols out in words.`, {
      param, code: 'TEXT_EXPANSION_LIMIT',
    });
  }
}

const nothingToSpeak = (param: string, cuesOnly: boolean) => new DomainError('invalid', cuesOnly
  ? `"${param}" holds only cue tags, which are silent pauses; add words to speak.`
  : `"${param}" contains nothing that can be spoken.`, { param, code: 'NOTHING_TO_SPEAK' });

/**
 * Prepared text for the engine, or the refusal: 422 moderation (aiRefine
 * only), 400 TEXT_EXPANSION_LIMIT when the reading is over MAX_EXPANSION
 * times the billed characters, 400 NOTHING_TO_SPEAK when no chunk has a
 * letter or digit (whitespace, zero-width characters, punctuation, unknown
 * tags, a BOM, NUL, lone surrogates) or every chunk is a cue tag, which
 * every engine renders as silence (SPEC Billing 3: no audio, no charge).
 */
export async function prepareForRequest(request: SpeechTextRequest): Promise<PreparedText> {
  const { param, ...input } = request;
  const outcome = await speechTextOffLoop(input);
  refuseIfRefused(outcome, param);
  if (outcome.kind !== 'ok' || !outcome.chunks.some((chunk) => cueOfChunk(chunk) === null)) {
    throw nothingToSpeak(param, outcome.kind === 'ok' && outcome.chunks.length > 0);
  }
  return { text: outcome.text, chunks: outcome.chunks };
}

/**
 * The same refusals as prepareForRequest for a request that does not render
 * now (a queued job: the worker prepares the text when it renders), without
 * cutting the chunks it would throw away.
 */
export async function refuseUnspeakable(request: SpeechTextRequest): Promise<void> {
  const { param, ...input } = request;
  const outcome = await speechTextOffLoop({ ...input, checkOnly: true });
  refuseIfRefused(outcome, param);
  if (outcome.kind !== 'checked' || !outcome.spoken) throw nothingToSpeak(param, outcome.kind === 'checked' && outcome.speakable);
}

/** Stops the pool's workers (tests; a process exits without it, idle workers being unref'd). */
export async function closePreparationPool(): Promise<void> {
  const current = pool;
  pool = null;
  await current?.close();
}
