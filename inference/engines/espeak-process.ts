/**
 * espeak-ng runs: text on stdin, WAV on stdout. The child is killed the
 * moment the signal fires so an abandoned request frees its CPU at once.
 */
import { SpawnError, spawnOffLoop } from './spawn-thread.ts';
import { EngineUnavailableError } from '../../core/ports/engine.ts';
import { parseWavHeader, wavData } from '../../core/speechkit/audio/wav.ts';
import { SampleAligner } from '../../core/speechkit/audio/pcm.ts';
import { abortError, throwIfAborted } from '../../core/speechkit/abort.ts';
import type { SpareEspeaks } from './espeak-spares.ts';
import { startChild } from '../../core/speechkit/launcher.ts';

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

function synthArgs(voice: EspeakVoiceArgs): string[] {
  return ['-v', voice.voice, '-s', String(voice.wordsPerMinute), '-p', String(voice.pitch), '-b', '1', '--stdout', '--stdin'];
}

/** Renders one chunk to PCM at espeak's native rate (22050 Hz), whole. */
export async function renderEspeak(binary: string, text: string, voice: EspeakVoiceArgs, signal?: AbortSignal): Promise<RenderedPcm> {
  const { stdout } = await runEspeakRaw(binary, synthArgs(voice), text, signal);
  const { info, data } = wavData(stdout);
  return { pcm: Buffer.from(data), sampleRate: info.sampleRate };
}

/**
 * After the first piece, PCM is handed on in pieces of at least this many
 * bytes (about 0.74 s at 22,050 Hz): espeak writes 4 KB at a time, and
 * every piece costs a trip through the resampler, encoder and socket.
 */
export const STREAM_PIECE_BYTES = 32_768;

/**
 * One espeak-ng process for a whole text, its PCM streamed as espeak writes
 * it: the first piece arrives after the first clause, not the whole text.
 * A consumer that stops pulling leaves the pipe full, which pauses espeak
 * (back-pressure); memory stays at the pipe and stream buffers.
 */
export async function* streamEspeak(
  binary: string, text: string, voice: EspeakVoiceArgs, signal?: AbortSignal, spares?: SpareEspeaks,
): AsyncGenerator<RenderedPcm> {
  throwIfAborted(signal);
  const args = synthArgs(voice);
  const child = await (spares ? spares.take(args) : startChild(binary, args));
  const { exited, stderr } = child;
  const onAbort = () => child.kill();
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) child.kill();
  child.stdin.end(text, 'utf8');
  try {
    let head: Buffer | null = Buffer.alloc(0);
    let sampleRate = 0;
    let dataLeft = Infinity;
    const aligner = new SampleAligner();
    let parts: Buffer[] = [];
    let size = 0;
    let first = true;
    for await (const part of child.stdout as AsyncIterable<Buffer>) {
      let data = part;
      if (head) {
        head = Buffer.concat([head, part]);
        const info = parseWavHeader(head);
        if (!info) continue;
        sampleRate = info.sampleRate;
        dataLeft = info.dataBytes;
        data = head.subarray(info.dataOffset);
        head = null;
      }
      const pcm = aligner.push(data.subarray(0, Math.min(data.length, dataLeft)));
      dataLeft -= pcm.length;
      if (pcm.length === 0) continue;
      parts.push(pcm);
      size += pcm.length;
      if (first || size >= STREAM_PIECE_BYTES) {
        yield { pcm: parts.length === 1 ? parts[0] : Buffer.concat(parts, size), sampleRate };
        first = false;
        parts = [];
        size = 0;
      }
    }
    const result = await exited;
    throwIfAborted(signal);
    if (result instanceof Error) {
      throw (result as NodeJS.ErrnoException).code === 'ENOENT' ? new EngineUnavailableError(`espeak-ng not found (${binary})`) : result;
    }
    if (result.code !== 0) throw new Error(`espeak-ng exited with ${result.code ?? result.signal}: ${stderr().trim().slice(0, 300)}`);
    if (size > 0) yield { pcm: Buffer.concat(parts, size), sampleRate };
  } finally {
    signal?.removeEventListener('abort', onAbort);
    if (child.running()) child.kill();
  }
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
