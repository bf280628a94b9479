/**
 * One espeak-ng run: text on stdin, WAV on stdout. The child is killed the
 * moment the signal fires so an abandoned request frees its CPU at once.
 */
import { SpawnError, spawnOffLoop } from './spawn-thread.ts';
import { EngineUnavailableError } from '../../core/ports/engine.ts';
import { wavData } from '../../core/speechkit/audio/wav.ts';
import { abortError } from '../../core/speechkit/abort.ts';

/** Found on PATH (Debian installs it as /usr/bin/espeak-ng). */
export const DEFAULT_ESPEAK_BINARY = 'espeak-ng';

export interface RenderedPcm {
  pcm: Buffer;
  sampleRate: number;
}

interface RunResult {
  stdout: Buffer;
  stderr: string;
}

/**
 * Runs espeak-ng with arguments and stdin text; rejects with AbortError when
 * aborted (the child is killed). The process is spawned from a worker thread
 * (spawn-thread.ts) so that forking never blocks the event loop.
 */
export async function runEspeakRaw(binary: string, args: string[], input: string, signal?: AbortSignal): Promise<RunResult> {
  if (signal?.aborted) throw abortError(signal);
  let aborted: () => void = () => undefined;
  const abort = new Promise<never>((_, reject) => {
    aborted = () => reject(abortError(signal));
    signal?.addEventListener('abort', aborted, { once: true });
  });
  abort.catch(() => undefined);
  try {
    const result = await Promise.race([spawnOffLoop(binary, args, input, signal), abort]);
    if (result.code === 0) return { stdout: result.stdout, stderr: result.stderr };
    throw new Error(`espeak-ng exited with ${result.code ?? result.signal}: ${result.stderr.trim().slice(0, 300)}`);
  } catch (err) {
    if (err instanceof SpawnError) {
      throw err.code === 'ENOENT' ? new EngineUnavailableError(`espeak-ng not found (${binary})`) : new Error(`espeak-ng could not run: ${err.code}`);
    }
    throw err;
  } finally {
    signal?.removeEventListener('abort', aborted);
  }
}

export interface EspeakVoiceArgs {
  /** `vi+f3`-style voice name */
  voice: string;
  wordsPerMinute: number;
  pitch: number;
}

/** Renders one chunk to PCM at espeak's native rate (22050 Hz). */
export async function renderEspeak(binary: string, text: string, voice: EspeakVoiceArgs, signal?: AbortSignal): Promise<RenderedPcm> {
  const args = ['-v', voice.voice, '-s', String(voice.wordsPerMinute), '-p', String(voice.pitch), '-b', '1', '--stdout', '--stdin'];
  const { stdout } = await runEspeakRaw(binary, args, text, signal);
  const { info, data } = wavData(stdout);
  return { pcm: Buffer.from(data), sampleRate: info.sampleRate };
}

/** IPA phonemes for the neural engine; espeak prints one line per clause. */
export async function phonemizeEspeak(binary: string, text: string, voice: string, signal?: AbortSignal): Promise<string[]> {
  const { stdout } = await runEspeakRaw(binary, ['-q', '--ipa', '-b', '1', '-v', voice, '--stdin'], text, signal);
  return stdout
    .toString('utf8')
    .split('\n')
    // "(en)hello(vi)": language-switch markers are not phonemes.
    .map((line) => line.replace(/\([a-z-]+\)/gu, '').trim())
    .filter(Boolean);
}
