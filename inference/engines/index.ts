/** Public surface of the speech engines (implementations of core/ports/engine.ts). */
export { createEngine, createLocalEngine } from './factory.ts';
export { EspeakEngine, espeakVoiceArgs, type EspeakEngineOptions } from './espeak.ts';
export { OnnxEngine, type OnnxEngineOptions } from './onnx.ts';
export { RouterEngine, type Backends } from './router.ts';
export { RemoteEngine, type RemoteEngineOptions } from './remote.ts';
export { AbortError, isAbortError } from '../../core/speechkit/abort.ts';
export { VoiceConfigError } from './piper-config.ts';
export { SYNTHESIZE_PATH, HEALTH_PATH, type WireRequest } from './wire.ts';
