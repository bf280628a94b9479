/**
 * Bodies of `POST /audio/speech` and `POST /agent/speech`: one continuous
 * encoded stream (engine → encoder → socket with back-pressure), optionally
 * copied into storage as it goes, or the same audio as server-sent events.
 */
import { encodeStream, type AudioFormat } from '../../core/speechkit/audio/index.ts';
import type { ResponseSink } from './sink.ts';
import { ApiError } from '../../core/errors.ts';
import { compatBody } from '../../core/http/envelopes.ts';
import { isUnreachableDependency, UNREACHABLE_RETRY_SECONDS } from '../../core/unreachable.ts';
import type { RunEnd, SpeechRun } from './synthesis.ts';
import type { SavedCopy } from './saved-copy.ts';
import { deltaEvents, doneEvent, errorEvent } from './sse.ts';

export interface AudioOutput {
  format: AudioFormat;
  sampleRate: number;
}

/**
 * Feeds encoded bytes to `deliver` until the audio ends, the client leaves
 * or something fails; resolves with how the run ended.
 */
async function pump(run: SpeechRun, output: AudioOutput, deliver: (bytes: Buffer) => Promise<boolean>): Promise<RunEnd> {
  // The engine already renders at the output rate; the encoder only changes the coding.
  const encoded = encodeStream(run.pcm(), { format: output.format, inputRate: run.sampleRate, outputRate: output.sampleRate });
  let threw = false;
  try {
    for await (const bytes of encoded as AsyncIterable<Buffer>) {
      if (!(await deliver(bytes))) {
        run.stop('client_gone');
        break;
      }
    }
  } catch {
    // The run knows whether its engine failed or was stopped; anything else is the encoder's failure.
    threw = true;
  } finally {
    encoded.destroy();
  }
  const end = run.end ?? 'failed';
  return threw && end === 'complete' ? 'failed' : end;
}

/** Audio bytes as they are encoded; a saved copy receives the same bytes. */
export function streamAudio(run: SpeechRun, sink: ResponseSink, output: AudioOutput, copy: SavedCopy | null): Promise<RunEnd> {
  return pump(run, output, async (bytes) => {
    if (copy) await copy.write(bytes);
    return sink.write(bytes);
  });
}

/**
 * A whole WAV (non-streamed `/audio/speech`): the samples are spooled into
 * the saved copy, which writes the WAV with its true RIFF and data sizes;
 * then the response sends that file with a Content-Length. Memory stays
 * bounded whatever the length; the first byte waits for the last sample.
 */
export async function sendWholeWav(run: SpeechRun, sink: ResponseSink, output: AudioOutput, copy: SavedCopy): Promise<RunEnd> {
  const end = await pump(run, { format: 'pcm', sampleRate: output.sampleRate }, async (bytes) => {
    await copy.write(bytes);
    return sink.open;
  });
  if (end !== 'complete') return end;
  const sealed = await copy.sealWav(output.sampleRate);
  if (!sealed) return 'failed';
  sink.setLength(sealed.size);
  for await (const bytes of sealed.stream as AsyncIterable<Buffer>) {
    if (!(await sink.write(bytes))) {
      sealed.stream.destroy();
      return 'client_gone';
    }
  }
  return 'complete';
}

/**
 * Ends a whole WAV. Nothing was sent before the last sample, so a run that
 * did not complete still gets a status: 500 in the compatible envelope
 * (refunded), instead of a cut transfer; 503 with Retry-After when the WAV
 * could not be stored because its store was out of reach or its disk full.
 */
export async function finishWholeWav(end: RunEnd, sink: ResponseSink, copy: SavedCopy): Promise<void> {
  if (end === 'complete') return sink.end();
  if (end === 'client_gone') return;
  if (isUnreachableDependency(copy.storageError)) {
    const unavailable = new ApiError(503, 'The audio cannot be stored right now; the tokens were refunded. Retry in a few seconds.');
    if (!sink.answerError(503, compatBody(unavailable), { 'Retry-After': String(UNREACHABLE_RETRY_SECONDS) })) sink.cut();
    return;
  }
  if (!sink.answerError(500, compatBody(runFailure(end)))) sink.cut();
}

/** The 500 of a run that ended without complete audio (refunded by then). */
export function runFailure(end: RunEnd): ApiError {
  const message = end === 'abandoned' ? 'No audio was produced for too long; the tokens were refunded.' : 'Synthesis failed; the tokens were refunded. Retry shortly.';
  return new ApiError(500, message);
}

/**
 * Ends an audio body. A run that failed before the encoder sent its first
 * byte still gets an error status (`failure`: the route's envelope);
 * afterwards headerless audio cannot say it is incomplete, so the body is
 * cut off mid-transfer.
 */
export async function finishAudio(end: RunEnd, sink: ResponseSink, failure: (end: RunEnd) => { status: number; body: unknown }): Promise<void> {
  if (end === 'complete') return sink.end();
  if (end === 'client_gone') return;
  const { status, body } = failure(end);
  if (!sink.answerError(status, body)) sink.cut();
}

/** The audio as `speech.audio.delta` events. */
export function streamSse(run: SpeechRun, sink: ResponseSink, output: AudioOutput): Promise<RunEnd> {
  return pump(run, output, (bytes) => sink.write(...deltaEvents(bytes)));
}

/** Exactly one `speech.audio.done` for complete audio; `speech.audio.error` otherwise. */
export async function finishSse(end: RunEnd, run: SpeechRun, sink: ResponseSink): Promise<void> {
  if (end === 'client_gone') return;
  if (end === 'complete') await sink.write(doneEvent(run.seconds));
  else {
    const why = end === 'abandoned' ? 'no audio was produced for too long' : 'synthesis failed';
    await sink.write(errorEvent(`The audio is incomplete (${why}); discard it. The tokens were refunded.`));
  }
  await sink.end();
}
