/**
 * Loads ONNX voices once per directory and keeps the sessions. Tries the
 * CUDA execution provider first and falls back to CPU, since the same image
 * runs on GPU nodes and on a laptop. onnxruntime is imported lazily: its
 * native library is large and most processes never synthesise with it.
 */
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { InferenceSession } from 'onnxruntime-node';
import type { Logger } from '../../core/logger.ts';
import { EngineUnavailableError } from '../../core/ports/engine.ts';
import { locateVoiceFiles, readVoiceConfig, type PiperVoiceConfig } from './piper-config.ts';

export type OrtModule = typeof import('onnxruntime-node');

export interface LoadedVoice {
  dir: string;
  config: PiperVoiceConfig;
  session: InferenceSession;
  /** the execution provider the session was created with */
  provider: string;
  inputNames: readonly string[];
  outputName: string;
}

export const DEFAULT_PROVIDERS = ['cuda', 'cpu'];
const REQUIRED_INPUTS = ['input', 'input_lengths', 'scales'];

let ortPromise: Promise<OrtModule> | null = null;

export function loadOrt(): Promise<OrtModule> {
  ortPromise ??= import('onnxruntime-node').catch((err: Error) => {
    ortPromise = null;
    throw new EngineUnavailableError(`onnxruntime-node cannot be loaded: ${err.message}`);
  });
  return ortPromise;
}

/**
 * onnxruntime-node ships the CUDA provider as a separate download (skipped by
 * `.npmrc` on CPU hosts). Trying it without the library makes the native
 * side print an error on every load, so it is only tried when installed.
 */
export function cudaProviderInstalled(): boolean {
  try {
    const pkgDir = path.dirname(createRequire(import.meta.url).resolve('onnxruntime-node/package.json'));
    const binDir = path.join(pkgDir, 'bin');
    return readdirSync(binDir).some((napi) =>
      existsSync(path.join(binDir, napi, process.platform, process.arch, 'libonnxruntime_providers_cuda.so')));
  } catch {
    return false;
  }
}

/** An NVIDIA device node: the container was given a GPU (whether or not onnxruntime can use it). */
export function gpuDevicePresent(): boolean {
  return existsSync('/dev/nvidiactl') || existsSync('/dev/nvidia0');
}

interface CreatedSession {
  session: InferenceSession;
  provider: string;
  /** providers tried before the one that loaded, with why they failed */
  failed: string[];
}

async function createSession(ort: OrtModule, modelPath: string, providers: string[]): Promise<CreatedSession> {
  const errors: string[] = [];
  const usable = providers.filter((p) => p !== 'cuda' || cudaProviderInstalled());
  for (const provider of usable.length > 0 ? usable : providers) {
    try {
      const session = await ort.InferenceSession.create(modelPath, { executionProviders: [provider], graphOptimizationLevel: 'all' });
      return { session, provider, failed: errors };
    } catch (err) {
      // A provider whose libraries are absent fails here; the next one is tried.
      errors.push(`${provider}: ${(err as Error).message}`);
    }
  }
  throw new EngineUnavailableError(`no execution provider could load ${modelPath} (${errors.join('; ')})`);
}

/**
 * One line per loaded voice saying which execution provider runs it. A GPU
 * pod whose image lacks the CUDA provider (an `npm ci` that honoured
 * `.npmrc`'s onnxruntime-node-install=skip) would otherwise run on CPU
 * without a word: that case is a warning.
 */
export function logVoiceLoaded(logger: Logger, voice: { dir: string; provider: string }, context: { requested: string[]; failed: string[]; cudaInstalled: boolean; gpuPresent: boolean }): void {
  const fields = {
    modelDir: voice.dir, provider: voice.provider, requested: context.requested, cudaProviderInstalled: context.cudaInstalled,
    gpuDevice: context.gpuPresent, ...(context.failed.length > 0 ? { failedProviders: context.failed } : {}),
  };
  const cudaWanted = context.requested.includes('cuda');
  if (voice.provider !== 'cuda' && cudaWanted && context.gpuPresent) {
    const why = context.cudaInstalled ? 'the CUDA provider failed to load' : 'the CUDA provider is not installed in this image (build the runtime-gpu target)';
    logger.warn(`onnx voice loaded on ${voice.provider} although a GPU is present: ${why}`, fields);
  } else {
    logger.info(`onnx voice loaded on the ${voice.provider} execution provider`, fields);
  }
}

export class VoiceLoader {
  private readonly voices = new Map<string, Promise<LoadedVoice>>();

  constructor(private readonly providers: string[] = DEFAULT_PROVIDERS, private readonly logger: Logger | null = null) {}

  /** Loads (or returns the cached) voice; concurrent first calls share one load. */
  load(dir: string): Promise<LoadedVoice> {
    let voice = this.voices.get(dir);
    if (!voice) {
      voice = this.loadUncached(dir);
      this.voices.set(dir, voice);
      // A failed load is not cached: the files may be fixed and retried.
      voice.catch(() => this.voices.delete(dir));
    }
    return voice;
  }

  private async loadUncached(dir: string): Promise<LoadedVoice> {
    const files = await locateVoiceFiles(dir);
    const config = await readVoiceConfig(files.configPath);
    const ort = await loadOrt();
    const { session, provider, failed } = await createSession(ort, files.modelPath, this.providers);
    const missing = REQUIRED_INPUTS.filter((n) => !session.inputNames.includes(n));
    if (missing.length > 0 || session.outputNames.length === 0) {
      await session.release();
      throw new EngineUnavailableError(`${files.modelPath} lacks the Piper signature (missing inputs: ${missing.join(', ') || 'none'})`);
    }
    if (this.logger) {
      logVoiceLoaded(this.logger, { dir, provider }, { requested: this.providers, failed, cudaInstalled: cudaProviderInstalled(), gpuPresent: gpuDevicePresent() });
    }
    return { dir, config, session, provider, inputNames: session.inputNames, outputName: session.outputNames[0] };
  }

  async close(): Promise<void> {
    const loads = [...this.voices.values()];
    this.voices.clear();
    const settled = await Promise.allSettled(loads);
    await Promise.all(settled.map((s) => (s.status === 'fulfilled' ? s.value.session.release() : undefined)));
  }
}
