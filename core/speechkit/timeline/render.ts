/**
 * The render of the timeline routes (dialogue, subtitles, dub): clips
 * spoken in turn into one timeline and stored as a WAV, with the engine
 * time of every clip counted. A failure is logged, the request's charge
 * given back (for routes that charged before rendering), both noted on the
 * request's outcome, and thrown as the API's refusal (renderFailure).
 */
import type { Blobs } from '../../ports/blobs.ts';
import type { SpeechEngine, VoiceProfile } from '../../ports/engine.ts';
import type { Logger } from '../../logger.ts';
import { speakClip, type SpokenClip } from './clip.ts';
import { renderFailure } from './failures.ts';
import { storeTimelineWav, type StoredWav } from './wav-blob.ts';
import type { TimelineWriter } from './writer.ts';

export interface TimelineRender {
  key: string;
  sampleRate: number;
  /** names the render in the log line of a failure */
  what: string;
  /** gives the request's charge back after a failure; absent when nothing is charged yet */
  refund?: () => Promise<void>;
}

/** What the request's outcome records of the render. */
export interface RenderOutcome {
  errorCode: string | null;
  genMs: number | null;
  audioSeconds: number;
}

/** Speaks one piece as a clip at the render's rate, its engine time counted. */
export type Speak = (text: string, voice: VoiceProfile) => Promise<SpokenClip>;

export async function renderTimeline(
  deps: { engine: SpeechEngine; blobs: Blobs; logger: Logger },
  scope: { outcome: RenderOutcome; signal: AbortSignal },
  render: TimelineRender,
  fill: (timeline: TimelineWriter, speak: Speak) => Promise<void>,
): Promise<StoredWav> {
  let genMs = 0;
  const speak: Speak = async (text, voice) => {
    const clip = await speakClip(deps.engine, { text, voice, sampleRate: render.sampleRate, signal: scope.signal });
    genMs += clip.genMs;
    return clip;
  };
  let stored: StoredWav;
  try {
    stored = await storeTimelineWav(deps.blobs, render.key, render.sampleRate, (timeline) => fill(timeline, speak));
  } catch (err) {
    deps.logger.warn(`${render.what} render failed`, { err: err as Error });
    await render.refund?.();
    const failure = renderFailure(err, render.refund !== undefined);
    scope.outcome.errorCode = failure.details.usageCode ?? null;
    scope.outcome.genMs = genMs;
    throw failure;
  }
  scope.outcome.genMs = genMs;
  scope.outcome.audioSeconds = stored.seconds;
  return stored;
}
