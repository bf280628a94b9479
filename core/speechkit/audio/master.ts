/**
 * Audiobook mastering: loudness to -19 LUFS, true peaks held under -3 dBTP
 * by a limiter after normalisation (loudnorm alone overshoots on short
 * plosives), 128 kbit/s mono MP3 at 48 kHz with ID3v2 tags.
 */
import type { Readable } from 'node:stream';
import { collectStream, ffmpegPcmStream } from './encode.ts';

export interface Id3Tags {
  title?: string;
  artist?: string;
  album?: string;
  /** track number, e.g. chapter index */
  track?: number;
  date?: string;
  genre?: string;
  comment?: string;
}

export interface MasterOptions {
  inputRate: number;
  tags?: Id3Tags;
  targetLufs?: number;
  truePeakDb?: number;
  bitrateKbps?: number;
}

const dbToLinear = (db: number) => 10 ** (db / 20);

function metadataArgs(tags: Id3Tags): string[] {
  return Object.entries(tags)
    .filter(([, v]) => v !== undefined && v !== '')
    .flatMap(([k, v]) => ['-metadata', `${k}=${String(v)}`]);
}

export function masterMp3Stream(pcm: AsyncIterable<Buffer>, options: MasterOptions): Readable {
  const lufs = options.targetLufs ?? -19;
  const peakDb = options.truePeakDb ?? -3;
  // level=0: alimiter would otherwise re-amplify its output back to 0 dBFS.
  const filter = `loudnorm=I=${lufs}:TP=${peakDb}:LRA=11,alimiter=limit=${dbToLinear(peakDb).toFixed(4)}:level=0`;
  return ffmpegPcmStream(pcm, {
    format: 'mp3',
    inputRate: options.inputRate,
    outputRate: 48000,
    container: 'mp3',
    args: [
      '-af', filter,
      '-c:a', 'libmp3lame', '-b:a', `${options.bitrateKbps ?? 128}k`, '-write_xing', '0',
      '-id3v2_version', '3', ...metadataArgs(options.tags ?? {}),
    ],
  });
}

export async function masterMp3(pcm: Buffer | AsyncIterable<Buffer>, options: MasterOptions): Promise<Buffer> {
  const source = Buffer.isBuffer(pcm) ? (async function* () { yield pcm; })() : pcm;
  return collectStream(masterMp3Stream(source, options));
}
