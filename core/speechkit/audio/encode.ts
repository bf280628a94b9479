/**
 * Encodes a stream of s16le mono PCM into an output format as the PCM
 * arrives. WAV, raw PCM and mu-law are encoded in-process (no process start,
 * no latency); MP3 goes through one `lame` process per stream (ffmpeg where
 * lame is not installed) and Ogg Opus through one ffmpeg process, stdin to
 * stdout. Destroying the returned stream stops the encoder and the PCM
 * source (its generator's `finally` runs, so an engine stops too).
 */
import { PassThrough, Readable } from 'node:stream';
import ffmpeg from 'fluent-ffmpeg';
import { outputRateFor, type AudioFormat } from './formats.ts';
import { requireFfmpeg } from './ffmpeg.ts';
import { lameBinary, lameStream } from './lame.ts';
import { encodeMulaw } from './mulaw.ts';
import { Resampler, resamplePcm } from './resample.ts';
import { wavFile, wavHeader } from './wav.ts';

export interface EncodeOptions {
  /** rate of the incoming PCM */
  inputRate: number;
  format: AudioFormat;
  /** requested output rate; ignored for opus (48000) and ulaw (8000); default 48000 */
  outputRate?: number;
  /** mp3 and opus only */
  bitrateKbps?: number;
}

const DEFAULT_BITRATE: Record<'mp3' | 'opus', number> = { mp3: 128, opus: 48 };

/** PCM at another rate, band-limited; passes through when the rates match. */
async function* resampled(pcm: AsyncIterable<Buffer>, inputRate: number, outputRate: number): AsyncGenerator<Buffer> {
  const resampler = new Resampler(inputRate, outputRate);
  try {
    for await (const chunk of pcm) {
      const out = resampler.push(chunk);
      if (out.length > 0) yield out;
    }
    const tail = resampler.flush();
    if (tail.length > 0) yield tail;
  } finally {
    resampler.close();
  }
}

async function* encodeInProcess(
  pcm: AsyncIterable<Buffer>, format: 'wav' | 'pcm' | 'ulaw', inputRate: number, outputRate: number,
): AsyncGenerator<Buffer> {
  if (format === 'wav') yield wavHeader(null, outputRate);
  for await (const out of resampled(pcm, inputRate, outputRate)) yield format === 'ulaw' ? encodeMulaw(out) : out;
}

/** Output arguments per codec; packets are flushed at once so streamed audio is not held back. */
function codecOptions(format: 'mp3' | 'opus', bitrateKbps: number): { container: string; args: string[] } {
  if (format === 'mp3') {
    // No Xing header: a pipe cannot be rewound to fill it in, and CBR needs none.
    return { container: 'mp3', args: ['-c:a', 'libmp3lame', '-b:a', `${bitrateKbps}k`, '-write_xing', '0', '-flush_packets', '1'] };
  }
  // Short Ogg pages keep Opus latency near one frame instead of one second.
  return { container: 'ogg', args: ['-c:a', 'libopus', '-b:a', `${bitrateKbps}k`, '-page_duration', '100000', '-flush_packets', '1'] };
}

/** Runs ffmpeg over a PCM stream with extra output arguments; shared with mastering. */
export function ffmpegPcmStream(
  pcm: AsyncIterable<Buffer>,
  opts: { inputRate: number; outputRate: number; container: string; args: string[]; format: AudioFormat },
): Readable {
  const binary = requireFfmpeg(opts.format);
  const input = Readable.from(pcm, { objectMode: false });
  const output = new PassThrough();
  const command = ffmpeg(input)
    .setFfmpegPath(binary)
    .inputFormat('s16le')
    .inputOptions(['-ar', String(opts.inputRate), '-ac', '1'])
    // Spread, not an array: fluent-ffmpeg splits array items at a space ("title=Chương 1").
    .outputOptions('-vn', '-ac', '1', '-ar', String(opts.outputRate), ...opts.args)
    .format(opts.container);
  command.on('error', (err: Error & { inputStreamError?: Error }) => {
    // The source's own error (an engine's AbortError) matters more than ffmpeg's wrapper.
    if (!output.destroyed) output.destroy(err.inputStreamError ?? err);
  });
  command.on('end', () => output.end());
  output.on('close', () => {
    input.destroy();
    command.kill('SIGKILL');
  });
  command.pipe(output, { end: false });
  return output;
}

/** Encodes PCM as it arrives; the result is a byte stream in the requested format. */
export function encodeStream(pcm: AsyncIterable<Buffer>, options: EncodeOptions): Readable {
  const { format, inputRate } = options;
  const outputRate = outputRateFor(format, options.outputRate);
  const lame = format === 'mp3' ? lameBinary() : null;
  if (lame) return lameStream(resampled(pcm, inputRate, outputRate), outputRate, options.bitrateKbps ?? DEFAULT_BITRATE.mp3, lame);
  if (format === 'mp3' || format === 'opus') {
    const { container, args } = codecOptions(format, options.bitrateKbps ?? DEFAULT_BITRATE[format]);
    return ffmpegPcmStream(pcm, { inputRate, outputRate, container, args, format });
  }
  return Readable.from(encodeInProcess(pcm, format, inputRate, outputRate), { objectMode: false });
}

export async function collectStream(stream: AsyncIterable<Buffer | string>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(typeof part === 'string' ? Buffer.from(part) : part);
  return Buffer.concat(parts);
}

/** Whole-buffer encoding for short clips; WAV gets an exact-length header. */
export async function encodeBuffer(pcm: Buffer, options: EncodeOptions): Promise<Buffer> {
  const outputRate = outputRateFor(options.format, options.outputRate);
  switch (options.format) {
    case 'wav':
      return wavFile(resamplePcm(pcm, options.inputRate, outputRate), outputRate);
    case 'pcm':
      return resamplePcm(pcm, options.inputRate, outputRate);
    case 'ulaw':
      return encodeMulaw(resamplePcm(pcm, options.inputRate, outputRate));
    default:
      return collectStream(encodeStream((async function* () { yield pcm; })(), options));
  }
}
