/**
 * Chooses the engine a process uses: the inference service over HTTP when
 * INFERENCE_URL is set and this process is not itself the inference role,
 * otherwise in-process espeak-ng and ONNX voices, routed per voice.
 */
import type { Config } from '../../config/load.ts';
import type { SpeechEngine } from '../../core/ports/engine.ts';
import { EspeakEngine } from './espeak.ts';
import { OnnxEngine } from './onnx.ts';
import { RemoteEngine } from './remote.ts';
import { RouterEngine } from './router.ts';

export function createLocalEngine(): RouterEngine {
  return new RouterEngine({ espeak: new EspeakEngine(), onnx: new OnnxEngine() });
}

export async function createEngine(config: Pick<Config, 'inferenceUrls' | 'roles'>): Promise<SpeechEngine> {
  if (config.inferenceUrls.length > 0 && !config.roles.includes('inference')) return new RemoteEngine({ baseUrl: config.inferenceUrls });
  return createLocalEngine();
}
