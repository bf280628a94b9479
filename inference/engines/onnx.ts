/**
 * Neural engine for Piper/VITS voices: espeak-ng phonemes → ids → one ONNX
 * run per chunk → float audio → s16le. Aborts between chunks; a run already
 * inside onnxruntime cannot be interrupted, so its result is dropped instead.
 */
import type { PcmChunk, SpeechEngine, SynthesisRequest, VoiceProfile } from '../../core/ports/engine.ts';
import { EngineUnavailableError } from '../../core/ports/engine.ts';
import type { CueTag } from '../../core/speechkit/text/cues.ts';
import type { Logger } from '../../core/logger.ts';
import { floatToPcm16 } from '../../core/speechkit/audio/pcm.ts';
import { linkedController, raceAbort, throwIfAborted } from '../../core/speechkit/abort.ts';
import { DEFAULT_CUE_PAUSE_MS, synthesizeChunks } from './chunked.ts';
import { DEFAULT_ESPEAK_BINARY, phonemizeEspeak, runEspeakRaw, type RenderedPcm } from './espeak-process.ts';
import { joinClauses, phonemesToIds } from './phoneme-ids.ts';
import { DEFAULT_PROVIDERS, VoiceLoader, loadOrt, type LoadedVoice } from './onnx-session.ts';

export interface OnnxEngineOptions {
  espeakBinary?: string;
  /** execution providers in order of preference (default cuda, then cpu) */
  executionProviders?: string[];
  lookahead?: number;
  cuePauseMs?: Partial<Record<CueTag, number>>;
  /** logs, per loaded voice, the execution provider it runs on */
  logger?: Logger;
}

function onnxRender(voice: VoiceProfile): { modelDir: string; speakerId?: number } {
  if (voice.render.backend !== 'onnx') throw new Error(`voice ${voice.id} is not an onnx voice`);
  return voice.render;
}

export class OnnxEngine implements SpeechEngine {
  readonly name = 'onnx';
  private readonly loader: VoiceLoader;
  private readonly espeakBinary: string;
  private readonly lookahead: number;
  private readonly cuePauseMs: Record<CueTag, number>;

  constructor(options: OnnxEngineOptions = {}) {
    this.loader = new VoiceLoader(options.executionProviders ?? DEFAULT_PROVIDERS, options.logger ?? null);
    this.espeakBinary = options.espeakBinary ?? DEFAULT_ESPEAK_BINARY;
    this.lookahead = options.lookahead ?? 1;
    this.cuePauseMs = { ...DEFAULT_CUE_PAUSE_MS, ...options.cuePauseMs };
  }

  /** Loads a voice ahead of the first request (start-up warm-up; logs its execution provider). */
  preload(modelDir: string): Promise<LoadedVoice> {
    return this.loader.load(modelDir);
  }

  async *synthesize(request: SynthesisRequest): AsyncGenerator<PcmChunk> {
    const { modelDir, speakerId } = onnxRender(request.voice);
    throwIfAborted(request.signal);
    const voice = await this.loader.load(modelDir);
    const controller = linkedController(request.signal);
    try {
      yield* synthesizeChunks(
        { ...request, signal: controller.signal },
        (text, signal) => this.renderChunk(voice, text, request.speed, speakerId, signal),
        { lookahead: this.lookahead, cueRate: voice.config.sampleRate, cuePauseMs: this.cuePauseMs },
      );
    } finally {
      controller.abort();
    }
  }

  private async phonemes(voice: LoadedVoice, text: string, signal: AbortSignal): Promise<string> {
    if (voice.config.phonemeType === 'text') return text;
    const clauses = await phonemizeEspeak(this.espeakBinary, text, voice.config.espeakVoice, signal);
    return joinClauses(clauses, text);
  }

  private async renderChunk(voice: LoadedVoice, text: string, speed: number, speakerId: number | undefined, signal: AbortSignal): Promise<RenderedPcm> {
    const { ids } = phonemesToIds(await this.phonemes(voice, text, signal), voice.config.phonemeIdMap);
    throwIfAborted(signal);
    const ort = await loadOrt();
    const { config } = voice;
    const feeds: Record<string, InstanceType<typeof ort.Tensor>> = {
      input: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]),
      input_lengths: new ort.Tensor('int64', BigInt64Array.from([BigInt(ids.length)]), [1]),
      // Faster speech is a shorter length scale.
      scales: new ort.Tensor('float32', Float32Array.from([config.noiseScale, config.lengthScale / speed, config.noiseW]), [3]),
    };
    if (voice.inputNames.includes('sid')) {
      const sid = Math.min(Math.max(0, speakerId ?? 0), config.numSpeakers - 1);
      feeds.sid = new ort.Tensor('int64', BigInt64Array.from([BigInt(sid)]), [1]);
    }
    const results = await raceAbort(voice.session.run(feeds), signal);
    const audio = results[voice.outputName].data;
    if (!(audio instanceof Float32Array)) throw new Error(`model output ${voice.outputName} is not float32`);
    return { pcm: floatToPcm16(audio), sampleRate: config.sampleRate };
  }

  async ping(): Promise<void> {
    await loadOrt();
    try {
      await runEspeakRaw(this.espeakBinary, ['--version'], '', AbortSignal.timeout(5000));
    } catch (err) {
      throw new EngineUnavailableError(`espeak-ng (the phonemiser) is not usable: ${(err as Error).message}`);
    }
  }

  async close(): Promise<void> {
    await this.loader.close();
  }
}
