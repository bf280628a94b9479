/**
 * The embedded engine: espeak-ng, one process per request (per stretch of
 * text between two cue tags), its audio streamed as espeak writes it and
 * resampled band-limited to the requested rate. Runs wherever the Debian
 * package is installed, needs no model files, and is the phonemiser the
 * neural engine builds on.
 */
import type { PcmChunk, SpeechEngine, SynthesisRequest, VoiceProfile } from '../../core/ports/engine.ts';
import { EngineUnavailableError } from '../../core/ports/engine.ts';
import { segmentCues, type CueTag } from '../../core/speechkit/text/cues.ts';
import { silence } from '../../core/speechkit/audio/pcm.ts';
import { Resampler } from '../../core/speechkit/audio/resample.ts';
import { linkedController, throwIfAborted } from '../../core/speechkit/abort.ts';
import { DEFAULT_CUE_PAUSE_MS, validateRequest } from './chunked.ts';
import { DEFAULT_ESPEAK_BINARY, runEspeakRaw, streamEspeak, type EspeakVoiceArgs, type RenderedPcm } from './espeak-process.ts';
import { SpareEspeaks } from './espeak-spares.ts';

export interface EspeakEngineOptions {
  binary?: string;
  /** keep started espeak-ng processes ready for the next requests (default true) */
  spares?: boolean;
  cuePauseMs?: Partial<Record<CueTag, number>>;
  /** words per minute at speed 1 when the voice does not say (default 165) */
  baseWordsPerMinute?: number;
}

/** espeak-ng's own sample rate; used for cue pauses before any WAV has been seen. */
export const ESPEAK_SAMPLE_RATE = 22050;
/** espeak-ng accepts 80 to 450 words per minute. */
const WPM_RANGE = [80, 450] as const;

export function espeakVoiceArgs(voice: VoiceProfile, speed: number, baseWpm = 165): EspeakVoiceArgs {
  const render = voice.render;
  if (render.backend !== 'espeak') throw new Error(`voice ${voice.id} is not an espeak voice`);
  const wpm = Math.round((render.wordsPerMinute ?? baseWpm) * speed);
  return {
    voice: render.variant ? `${render.espeakVoice}+${render.variant}` : render.espeakVoice,
    wordsPerMinute: Math.min(WPM_RANGE[1], Math.max(WPM_RANGE[0], wpm)),
    pitch: Math.min(99, Math.max(0, Math.round(render.pitch ?? 50))),
  };
}

export class EspeakEngine implements SpeechEngine {
  readonly name = 'espeak-ng';
  private readonly binary: string;
  private readonly spares: SpareEspeaks | undefined;
  private readonly cuePauseMs: Record<CueTag, number>;
  private readonly baseWpm: number;
  /** so close() can stop every stream still running */
  private readonly live = new Set<AbortController>();

  constructor(options: EspeakEngineOptions = {}) {
    this.binary = options.binary ?? DEFAULT_ESPEAK_BINARY;
    this.spares = options.spares === false ? undefined : new SpareEspeaks(this.binary);
    this.cuePauseMs = { ...DEFAULT_CUE_PAUSE_MS, ...options.cuePauseMs };
    this.baseWpm = options.baseWordsPerMinute ?? 165;
  }

  async *synthesize(request: SynthesisRequest): AsyncGenerator<PcmChunk> {
    validateRequest(request);
    throwIfAborted(request.signal);
    const voice = espeakVoiceArgs(request.voice, request.speed, this.baseWpm);
    const controller = linkedController(request.signal);
    const { signal } = controller;
    this.live.add(controller);
    // One resampler per source rate keeps the filter continuous across segments.
    const resamplers = new Map<number, Resampler>();
    const resample = (rendered: RenderedPcm): Buffer => {
      let r = resamplers.get(rendered.sampleRate);
      if (!r) resamplers.set(rendered.sampleRate, (r = new Resampler(rendered.sampleRate, request.sampleRate)));
      return r.push(rendered.pcm);
    };
    try {
      for (const segment of segmentCues(request.text)) {
        if (segment.kind === 'cue') {
          const pcm = resample({ pcm: silence(this.cuePauseMs[segment.cue], ESPEAK_SAMPLE_RATE), sampleRate: ESPEAK_SAMPLE_RATE });
          if (pcm.length > 0) yield { pcm, sampleRate: request.sampleRate };
          continue;
        }
        for await (const rendered of streamEspeak(this.binary, segment.text, voice, signal, this.spares)) {
          throwIfAborted(signal);
          const pcm = resample(rendered);
          if (pcm.length > 0) yield { pcm, sampleRate: request.sampleRate };
        }
      }
      throwIfAborted(signal);
      const tail = Buffer.concat([...resamplers.values()].map((r) => r.flush()));
      if (tail.length > 0) yield { pcm: tail, sampleRate: request.sampleRate };
    } finally {
      for (const r of resamplers.values()) r.close();
      this.live.delete(controller);
      controller.abort();
    }
  }

  async ping(): Promise<void> {
    try {
      await runEspeakRaw(this.binary, ['--version'], '', AbortSignal.timeout(5000));
    } catch (err) {
      throw new EngineUnavailableError(`espeak-ng is not usable: ${(err as Error).message}`);
    }
  }

  async close(): Promise<void> {
    for (const c of this.live) c.abort();
    this.live.clear();
    this.spares?.close();
  }
}
