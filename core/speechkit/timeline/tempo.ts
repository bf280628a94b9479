/**
 * Speeds speech up without changing its pitch: ffmpeg's `atempo` filter
 * (WSOLA) over s16le mono, stdin to stdout. One clip is a subtitle cue's
 * worth of audio, so it is passed whole.
 */
import { spawn } from 'node:child_process';
import { requireFfmpeg } from '../audio/ffmpeg.ts';
import { abortError } from '../abort.ts';

/** atempo's own range in the bundled ffmpeg; one filter covers it. */
const ATEMPO_MIN = 0.5;
const ATEMPO_MAX = 100;

export async function changeTempo(pcm: Buffer, sampleRate: number, tempo: number, signal?: AbortSignal): Promise<Buffer> {
  if (Math.abs(tempo - 1) < 1e-3 || pcm.length === 0) return pcm;
  if (!(tempo >= ATEMPO_MIN && tempo <= ATEMPO_MAX)) throw new RangeError(`tempo ${tempo} is outside ${ATEMPO_MIN} to ${ATEMPO_MAX}`);
  const ffmpeg = requireFfmpeg('wav');
  const rate = String(sampleRate);
  const args = ['-hide_banner', '-loglevel', 'error', '-f', 's16le', '-ar', rate, '-ac', '1', '-i', 'pipe:0',
    '-af', `atempo=${tempo.toFixed(6)}`, '-f', 's16le', '-ar', rate, '-ac', '1', 'pipe:1'];
  return new Promise<Buffer>((resolve, reject) => {
    const child = spawn(ffmpeg, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let stderr = '';
    const onAbort = () => child.kill('SIGKILL');
    signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    child.stdin.on('error', () => undefined); // an early exit is reported by 'close'
    child.on('error', reject);
    child.on('close', (code) => {
      signal?.removeEventListener('abort', onAbort);
      if (signal?.aborted) return reject(abortError(signal));
      if (code !== 0) return reject(new Error(`ffmpeg atempo failed (${code}): ${stderr.trim()}`));
      const joined = Buffer.concat(out);
      resolve(joined.subarray(0, joined.length - (joined.length % 2)));
    });
    child.stdin.end(pcm);
  });
}

/** A short linear fade-out at the end of a clip, so a cut does not click. */
export function fadeOut(pcm: Buffer, sampleRate: number, ms = 20): Buffer {
  const out = Buffer.from(pcm);
  const n = out.length >> 1;
  const fade = Math.min(n, Math.round((sampleRate * ms) / 1000));
  for (let i = 0; i < fade; i++) {
    const at = (n - fade + i) * 2;
    out.writeInt16LE(Math.round(out.readInt16LE(at) * (1 - (i + 1) / fade)), at);
  }
  return out;
}
