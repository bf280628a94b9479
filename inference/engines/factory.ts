/**
 * Chooses the engine a process uses: the inference service over HTTP when
 * INFERENCE_URL is set and this process is not itself the inference role,
 * otherwise in-process espeak-ng and ONNX voices, routed per voice.
 */
import type { Config } from '../../config/load.ts';
import type { SpeechEngine, VoiceProfile } from '../../core/ports/engine.ts';
import type { Logger } from '../../core/logger.ts';
import { EspeakEngine } from './espeak.ts';
import { OnnxEngine } from './onnx.ts';
import { RemoteEngine } from './remote.ts';
import { RouterEngine } from './router.ts';

export function createLocalEngine(options: { logger?: Logger; voices?: VoiceProfile[] } = {}): RouterEngine {
  const onnx = new OnnxEngine({ logger: options.logger });
  // ONNX voices load at start-up rather than on their first request, which also logs the provider each runs on.
  const dirs = new Set((options.voices ?? []).flatMap((v) => (v.render.backend === 'onnx' ? [v.render.modelDir] : [])));
  for (const dir of dirs) {
    onnx.preload(dir).catch((err: Error) => options.logger?.error('onnx voice failed to load; its requests will fail until it does', { modelDir: dir, err }));
  }
  return new RouterEngine({ espeak: new EspeakEngine(), onnx });
}

export async function createEngine(config: Pick<Config, 'inferenceUrls' | 'roles' | 'voices'>, logger?: Logger): Promise<SpeechEngine> {
  if (config.inferenceUrls.length > 0 && !config.roles.includes('inference')) return new RemoteEngine({ baseUrl: config.inferenceUrls });
  return createLocalEngine({ logger, voices: config.voices });
}
