/**
 * One espeak-ng run: text on stdin, WAV on stdout. The child is killed the
 * moment the signal fires so an abandoned request frees its CPU at once.
 */
import { spawn } from 'node:child_process';
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

/** Runs espeak-ng with arguments and stdin text; rejects with AbortError when aborted. */
export function runEspeakRaw(binary: string, args: string[], input: string, signal?: AbortSignal): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const child = spawn(binary, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let stderr = '';
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      fn();
    };
    const onAbort = () => {
      child.kill('SIGKILL');
      settle(() => reject(abortError(signal)));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    child.on('error', (err: NodeJS.ErrnoException) => settle(() => reject(
      err.code === 'ENOENT' ? new EngineUnavailableError(`espeak-ng not found (${binary})`) : err,
    )));
    child.on('close', (code, sig) => settle(() => {
      if (code === 0) resolve({ stdout: Buffer.concat(out), stderr });
      else reject(new Error(`espeak-ng exited with ${code ?? sig}: ${stderr.trim().slice(0, 300)}`));
    }));
    // EPIPE when the child dies early is reported through 'close' instead.
    child.stdin.on('error', () => undefined);
    child.stdin.end(input, 'utf8');
  });
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
