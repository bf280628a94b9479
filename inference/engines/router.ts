/** Sends each request to the backend its voice names (`render.backend`). */
import type { PcmChunk, SpeechEngine, SynthesisRequest, VoiceRender } from '../../core/ports/engine.ts';
import { EngineUnavailableError } from '../../core/ports/engine.ts';

export type Backends = Partial<Record<VoiceRender['backend'], SpeechEngine>>;

export class RouterEngine implements SpeechEngine {
  readonly name = 'router';

  constructor(private readonly backends: Backends) {}

  async *synthesize(request: SynthesisRequest): AsyncGenerator<PcmChunk> {
    const backend = request.voice.render.backend;
    const engine = this.backends[backend];
    if (!engine) throw new EngineUnavailableError(`no engine serves ${backend} voices (voice ${request.voice.id})`);
    yield* engine.synthesize(request);
  }

  async ping(): Promise<void> {
    await Promise.all(Object.values(this.backends).map((e) => e.ping()));
  }

  async close(): Promise<void> {
    await Promise.all(Object.values(this.backends).map((e) => e.close()));
  }
}
