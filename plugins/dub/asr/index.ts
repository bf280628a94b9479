/** Chooses the recogniser the configuration names: ASR_MODEL (in process), ASR_URL (remote), or none. */
import { createRemoteRecognizer } from './remote.ts';
import { createSherpaRecognizer } from './sherpa.ts';
import type { SpeechRecognizer } from './port.ts';

export interface AsrConfig {
  ASR_URL?: string;
  ASR_MODEL?: string;
  ASR_REMOTE_MODEL: string;
  ASR_API_KEY?: string;
  ASR_LANGUAGE: string;
  ASR_TIMEOUT_SECONDS: number;
  ASR_THREADS: number;
}

export function createRecognizer(config: AsrConfig): SpeechRecognizer | null {
  if (config.ASR_MODEL) return createSherpaRecognizer({ dir: config.ASR_MODEL, language: config.ASR_LANGUAGE, threads: config.ASR_THREADS });
  if (config.ASR_URL) {
    return createRemoteRecognizer({
      url: config.ASR_URL, model: config.ASR_REMOTE_MODEL, language: config.ASR_LANGUAGE, apiKey: config.ASR_API_KEY ?? null,
      timeoutMs: config.ASR_TIMEOUT_SECONDS * 1000,
    });
  }
  return null;
}
