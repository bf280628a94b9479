import type { VoiceProfile, VoiceRender } from '../../config/voices.ts';

export type { VoiceProfile, VoiceRender };

/**
 * Engine port: text in, 16-bit mono PCM out as an async stream, cancellable
 * with an AbortSignal so a client that disconnects stops the work at once.
 * Implementations live in inference/engines/ (espeak-ng embedded default,
 * ONNX Piper/VITS, and the remote client of the inference service).
 */


export interface SynthesisRequest {
  /** prepared text (after text preparation); may contain kept cue tags */
  text: string;
  voice: VoiceProfile;
  /** 0.5 to 2.0 */
  speed: number;
  /** output sample rate in Hz; the engine resamples */
  sampleRate: number;
  signal?: AbortSignal;
}

export interface PcmChunk {
  /** signed 16-bit little-endian mono samples */
  pcm: Buffer;
  sampleRate: number;
}

export interface SpeechEngine {
  readonly name: string;
  /** yields PCM as it is produced; throws AbortError when the signal fires */
  synthesize(request: SynthesisRequest): AsyncIterable<PcmChunk>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export class EngineUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EngineUnavailableError';
  }
}
