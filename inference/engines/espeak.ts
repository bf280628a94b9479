/**
 * The embedded engine: espeak-ng, one process per text chunk. Runs wherever
 * the Debian package is installed, needs no model files, and is the
 * phonemiser the neural engine builds on.
 */
import type { PcmChunk, SpeechEngine, SynthesisRequest, VoiceProfile } from '../../core/ports/engine.ts';
import { EngineUnavailableError } from '../../core/ports/engine.ts';
import type { CueTag } from '../../core/speechkit/text/cues.ts';
import { linkedController } from '../../core/speechkit/abort.ts';
import { DEFAULT_CUE_PAUSE_MS, synthesizeChunks } from './chunked.ts';
import { DEFAULT_ESPEAK_BINARY, renderEspeak, runEspeakRaw, type EspeakVoiceArgs } from './espeak-process.ts';
import { warmSpawnThread } from './spawn-thread.ts';

export interface EspeakEngineOptions {
  binary?: string;
  /** chunks rendered ahead of the one being streamed (default 1) */
  lookahead?: number;
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
  private readonly lookahead: number;
  private readonly cuePauseMs: Record<CueTag, number>;
  private readonly baseWpm: number;
  /** so close() can stop every stream still running */
  private readonly live = new Set<AbortController>();

  constructor(options: EspeakEngineOptions = {}) {
    this.binary = options.binary ?? DEFAULT_ESPEAK_BINARY;
    this.lookahead = options.lookahead ?? 1;
    this.cuePauseMs = { ...DEFAULT_CUE_PAUSE_MS, ...options.cuePauseMs };
    this.baseWpm = options.baseWordsPerMinute ?? 165;
    warmSpawnThread();
  }

  async *synthesize(request: SynthesisRequest): AsyncGenerator<PcmChunk> {
    const voice = espeakVoiceArgs(request.voice, request.speed, this.baseWpm);
    const controller = linkedController(request.signal);
    this.live.add(controller);
    try {
      yield* synthesizeChunks(
        { ...request, signal: controller.signal },
        (text, signal) => renderEspeak(this.binary, text, voice, signal),
        { lookahead: this.lookahead, cueRate: ESPEAK_SAMPLE_RATE, cuePauseMs: this.cuePauseMs },
      );
    } finally {
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
  }
}
