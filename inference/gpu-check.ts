/**
 * `node dist/inference/gpu-check.js <voiceDir>...`: run it in a pod of the
 * runtime-gpu image to see that each ONNX voice loads on the CUDA execution
 * provider and speaks. Prints the engine's own start-up line per voice, then
 * one JSON summary; exits 1 when a GPU is present but a voice runs on
 * another provider, or a voice produces no audio (2 on bad usage).
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { CATALOGUE } from '../config/voices.ts';
import { createLogger, type Logger } from '../core/logger.ts';
import { OnnxEngine } from './engines/onnx.ts';
import { gpuDevicePresent } from './engines/onnx-session.ts';

const SENTENCE = 'Xin chào, đây là bài kiểm tra giọng đọc trên máy có GPU.';
const SAMPLE_RATE = 24000;

export interface VoiceCheck {
  modelDir: string;
  provider: string;
  /** seconds of audio the test sentence gave */
  audioSeconds: number;
  /** the second rendering's time (the first one warms the provider's kernels up) */
  renderMs: number;
  ok: boolean;
  /** why the voice could not be loaded or could not speak */
  error?: string;
}

export interface GpuCheckReport {
  gpuDevice: boolean;
  voices: VoiceCheck[];
  ok: boolean;
}

async function speak(engine: OnnxEngine, modelDir: string, speakerId: number | undefined): Promise<number> {
  const voice = { ...CATALOGUE[0], render: { backend: 'onnx' as const, modelDir, ...(speakerId === undefined ? {} : { speakerId }) } };
  let bytes = 0;
  for await (const chunk of engine.synthesize({ text: SENTENCE, voice, speed: 1, sampleRate: SAMPLE_RATE })) bytes += chunk.pcm.length;
  return bytes / 2 / SAMPLE_RATE;
}

/** `gpuPresent` is the device probe, a parameter so that tests can stand in for a GPU host. */
export async function checkVoices(dirs: string[], options: { logger?: Logger; gpuPresent?: boolean } = {}): Promise<GpuCheckReport> {
  const gpuDevice = options.gpuPresent ?? gpuDevicePresent();
  const engine = new OnnxEngine({ logger: options.logger ?? createLogger('info', { tool: 'gpu-check' }) });
  const voices: VoiceCheck[] = [];
  try {
    for (const modelDir of dirs) {
      try {
        const loaded = await engine.preload(modelDir);
        const speakerId = loaded.config.numSpeakers > 1 ? 0 : undefined;
        await speak(engine, modelDir, speakerId);
        const started = performance.now();
        const audioSeconds = await speak(engine, modelDir, speakerId);
        const renderMs = Math.round(performance.now() - started);
        voices.push({ modelDir, provider: loaded.provider, audioSeconds, renderMs, ok: audioSeconds > 0 && (!gpuDevice || loaded.provider === 'cuda') });
      } catch (err) {
        voices.push({ modelDir, provider: 'none', audioSeconds: 0, renderMs: 0, ok: false, error: (err as Error).message });
      }
    }
  } finally {
    await engine.close();
  }
  return { gpuDevice, voices, ok: voices.every((v) => v.ok) };
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const dirs = process.argv.slice(2);
  if (dirs.length === 0) {
    console.error('usage: node dist/inference/gpu-check.js <voiceDir>...');
    process.exit(2);
  }
  const report = await checkVoices(dirs);
  console.log(JSON.stringify(report));
  process.exit(report.ok ? 0 : 1);
}
