/**
 * Decodes any recording ffmpeg reads into s16le mono PCM at a chosen rate
 * (speech recognisers want 16 kHz), or only counts its length.
 */
import { spawn } from 'node:child_process';
import { requireFfmpeg } from './ffmpeg.ts';
import { abortError } from '../abort.ts';

/** ffmpeg ran and could not decode the recording: the file's fault, not the server's. */
export class UndecodableAudioError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UndecodableAudioError';
  }
}

function runDecode(file: string, sampleRate: number, onData: (chunk: Buffer) => void, signal?: AbortSignal): Promise<void> {
  const ffmpeg = requireFfmpeg('pcm');
  const args = ['-hide_banner', '-loglevel', 'error', '-nostdin', '-i', file, '-vn', '-ac', '1', '-ar', String(sampleRate), '-f', 's16le', 'pipe:1'];
  return new Promise((resolve, reject) => {
    const child = spawn(ffmpeg, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    const onAbort = () => child.kill('SIGKILL');
    signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => { stderr = (stderr + chunk.toString()).slice(-2000); });
    child.on('error', reject);
    child.on('close', (code) => {
      signal?.removeEventListener('abort', onAbort);
      if (signal?.aborted) return reject(abortError(signal));
      if (code !== 0) return reject(new UndecodableAudioError(`ffmpeg could not decode the recording (${code}): ${stderr.trim()}`));
      resolve();
    });
  });
}

/** The whole recording as s16le mono PCM at `sampleRate`. */
export async function decodeToPcm(file: string, sampleRate: number, signal?: AbortSignal): Promise<Buffer> {
  const parts: Buffer[] = [];
  await runDecode(file, sampleRate, (chunk) => parts.push(chunk), signal);
  const pcm = Buffer.concat(parts);
  return pcm.subarray(0, pcm.length - (pcm.length % 2));
}

/** Seconds of audio, counted by decoding at a low rate without keeping the samples. */
export async function measureSeconds(file: string, signal?: AbortSignal): Promise<number> {
  const rate = 8000;
  let bytes = 0;
  await runDecode(file, rate, (chunk) => { bytes += chunk.length; }, signal);
  return bytes / 2 / rate;
}
