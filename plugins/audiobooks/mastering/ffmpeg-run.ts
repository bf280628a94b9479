import { spawn } from 'node:child_process';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { requireFfmpeg } from '../../../core/speechkit/audio/ffmpeg.ts';

/**
 * One run of the bundled ffmpeg over a stream on stdin, for the passes of
 * mastering: measuring passes read ffmpeg's report on stderr, encoding passes
 * stream stdout on. Nothing goes through temporary files.
 */
export interface FfmpegRun {
  /** what stdin carries */
  input: AsyncIterable<Buffer>;
  /** how ffmpeg reads it (`pcmInput(rate)`, or `['-f', 'mp3']`) */
  inputArgs: string[];
  /** output arguments (filters, codec, format, target) */
  args: string[];
  /** where stdout goes; omit for passes that only measure (`-f null -`) */
  stdout?: Writable;
  signal?: AbortSignal;
}

/** The last part of stderr kept (the reports come at the end). */
const STDERR_KEEP = 64 * 1024;

/** Input arguments for signed 16-bit mono PCM. */
export const pcmInput = (rate: number) => ['-f', 's16le', '-ar', String(rate), '-ac', '1', '-channel_layout', 'mono'];

export async function runFfmpeg(run: FfmpegRun): Promise<string> {
  const binary = requireFfmpeg('mp3');
  const child = spawn(binary, ['-hide_banner', '-nostdin', ...run.inputArgs, '-i', 'pipe:0', ...run.args], {
    stdio: ['pipe', run.stdout ? 'pipe' : 'ignore', 'pipe'],
    signal: run.signal,
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-STDERR_KEEP);
  });
  const exited = new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
  // ffmpeg may stop reading early (it failed): a broken pipe is then its exit code's story, not ours.
  const fed = pipeline(Readable.from(run.input), child.stdin!).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_PREMATURE_CLOSE') throw err;
  });
  const drained = run.stdout ? pipeline(child.stdout!, run.stdout) : Promise.resolve();
  const [code] = await Promise.all([exited, fed, drained]);
  if (code !== 0) throw new Error(`ffmpeg exited with ${code}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`);
  return stderr;
}

/** The JSON object loudnorm prints with `print_format=json`. */
export function parseLoudnormReport(stderr: string): Record<string, string> {
  const start = stderr.lastIndexOf('{');
  const end = stderr.lastIndexOf('}');
  if (start < 0 || end < start) throw new Error('loudnorm printed no measurement');
  return JSON.parse(stderr.slice(start, end + 1)) as Record<string, string>;
}

/** Integrated loudness and true peak from the summary the ebur128 filter prints. */
export function parseEbur128Summary(stderr: string): { integrated: number; truePeak: number } {
  const summary = stderr.slice(stderr.lastIndexOf('Summary:'));
  const integrated = /I:\s+(-?[\d.]+|-inf) LUFS/.exec(summary)?.[1];
  const peak = /Peak:\s+(-?[\d.]+|-inf) dBFS/.exec(summary)?.[1];
  if (integrated === undefined || peak === undefined) throw new Error('ebur128 printed no summary');
  const num = (v: string) => (v === '-inf' ? -Infinity : Number(v));
  return { integrated: num(integrated), truePeak: num(peak) };
}
