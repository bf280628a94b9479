/**
 * Audiobook mastering (SPEC "Output"): loudness -19 LUFS integrated, true
 * peaks at most -3 dBTP, 128 kbit/s mono MP3 at 48 kHz with ID3v2 tags
 * (title, album = book, artist = author, track = chapter number).
 *
 * A gentle compressor, then two-pass loudnorm plus a limiter: the first pass
 * measures the compressed chapter, the second normalises with those
 * measurements and a limiter holds the peaks. Speech peaks sit 15 to 20 dB
 * above its loudness (synthetic speech more), so without the compressor
 * holding them at -3 dBTP would take several LU away; with it the limiter
 * gives back a few tenths, and MP3 encoding a few more. So each
 * second pass is encoded and the MP3 itself is measured with ffmpeg's ebur128
 * meter (as a player or the tests would); when it misses -19 by more than
 * 0.15 LU, or its true peak is too high, the target is corrected and the pass
 * runs again. The MP3 of the accepted pass is the result. Every pass streams
 * the PCM from its source again: no temporary files, bounded memory.
 */
import { PassThrough, type Readable } from 'node:stream';
import { parseEbur128Summary, parseLoudnormReport, pcmInput, runFfmpeg } from './ffmpeg-run.ts';

export interface Id3Tags {
  /** chapter title */
  title: string;
  /** book title */
  album: string;
  /** author */
  artist?: string | null;
  /** chapter number */
  track: number;
}

export interface MasterSource {
  /** opens the PCM (s16le mono) from the start; called once per pass */
  open(): AsyncIterable<Buffer>;
  sampleRate: number;
}

/** Stores one candidate MP3 (a later call replaces it): the last one stored is the result. */
export type Mp3Sink = (mp3: Readable) => Promise<void>;

export interface MasterOptions {
  targetLufs?: number;
  truePeakDb?: number;
  bitrateKbps?: number;
  /** loudness may miss the target by this much */
  toleranceLu?: number;
  signal?: AbortSignal;
}

export interface MasterResult {
  /** as measured on the stored MP3 */
  integrated: number;
  truePeak: number;
  /** encoded passes it took */
  passes: number;
}

const OUTPUT_RATE = 48_000;
/** The limiter's ceiling starts this far under the true-peak target (inter-sample peaks, MP3 overshoot). */
const LIMITER_MARGIN_DB = 0.3;
const MAX_PASSES = 6;
/**
 * Threshold -30 dBFS, 8:1, 0.1 ms attack: brings the peak-to-loudness ratio
 * of (synthetic) speech from 17-19 dB to 13-14, so loudnorm reaches -19 LUFS
 * with the peaks already under -3 dBTP and the limiter is only a safety net.
 * (Driving a limiter 4 dB hard instead makes MP3 true peaks overshoot it.)
 */
const COMPRESSOR = 'acompressor=threshold=0.03:ratio=8:attack=0.1:release=80:knee=2';
/** Beyond this (or over the true-peak target) the result is refused and mastering counts as failed. */
const ACCEPTABLE_LU = 0.5;

const dbToLinear = (db: number) => 10 ** (db / 20);
const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));

interface Measured {
  input_i: string;
  input_tp: string;
  input_lra: string;
  input_thresh: string;
  target_offset: string;
}

function chain(measured: Measured | null, target: number, truePeak: number, limiterDb: number): string {
  const limiter = `alimiter=limit=${dbToLinear(limiterDb).toFixed(4)}:level=0:attack=5:release=50`;
  // loudnorm works at 192 kHz: back to 48 kHz before the limiter, so it sees what the encoder gets;
  // aformat names the layout, without which ffmpeg 4 cannot link the limiter when encoding.
  const resample = `aresample=${OUTPUT_RATE},aformat=channel_layouts=mono`;
  if (!measured) return `${COMPRESSOR},${resample},${limiter}`;
  const loudnorm = `loudnorm=I=${target.toFixed(2)}:TP=${truePeak}:LRA=20:measured_I=${measured.input_i}:measured_TP=${measured.input_tp}`
    + `:measured_LRA=${measured.input_lra}:measured_thresh=${measured.input_thresh}:offset=${measured.target_offset}:linear=true`;
  return `${COMPRESSOR},${loudnorm},${resample},${limiter}`;
}

function metadataArgs(tags: Id3Tags): string[] {
  const entries: Array<[string, string]> = [['title', tags.title], ['album', tags.album], ['track', String(tags.track)]];
  if (tags.artist) entries.push(['artist', tags.artist]);
  return entries.flatMap(([k, v]) => ['-metadata', `${k}=${v}`]);
}

/** First pass: loudnorm's measurement of the chapter as rendered; null when it is silent. */
async function measure(source: MasterSource, targetLufs: number, truePeakDb: number, signal?: AbortSignal): Promise<Measured | null> {
  const stderr = await runFfmpeg({
    input: source.open(), inputArgs: pcmInput(source.sampleRate), signal,
    args: ['-af', `${COMPRESSOR},loudnorm=I=${targetLufs}:TP=${truePeakDb}:LRA=20:print_format=json`, '-f', 'null', '-'],
  });
  const report = parseLoudnormReport(stderr) as unknown as Measured;
  return Number.isFinite(Number(report.input_i)) && Number(report.input_i) > -70 ? report : null;
}

/** A second pass: encodes with `filters` into the sink and, from the same bytes, measures the MP3. */
async function encodeAndMeter(source: MasterSource, filters: string, tags: Id3Tags, sink: Mp3Sink, options: MasterOptions) {
  const mp3 = new PassThrough();
  const toSink = new PassThrough();
  const toMeter = new PassThrough();
  mp3.pipe(toSink);
  mp3.pipe(toMeter);
  const [, , meter] = await Promise.all([
    runFfmpeg({
      input: source.open(), inputArgs: pcmInput(source.sampleRate), signal: options.signal, stdout: mp3,
      args: [
        '-af', filters, '-ar', String(OUTPUT_RATE), '-ac', '1', '-c:a', 'libmp3lame', '-b:a', `${options.bitrateKbps ?? 128}k`,
        '-write_xing', '0', '-id3v2_version', '3', ...metadataArgs(tags), '-f', 'mp3', 'pipe:1',
      ],
    }),
    sink(toSink),
    runFfmpeg({ input: toMeter, inputArgs: ['-f', 'mp3'], signal: options.signal, args: ['-af', 'ebur128=peak=true', '-f', 'null', '-'] }),
  ]);
  return parseEbur128Summary(meter);
}

export async function masterMp3(source: MasterSource, tags: Id3Tags, sink: Mp3Sink, options: MasterOptions = {}): Promise<MasterResult> {
  const goal = options.targetLufs ?? -19;
  const truePeak = options.truePeakDb ?? -3;
  const tolerance = options.toleranceLu ?? 0.15;
  const measured = await measure(source, goal, truePeak, options.signal);

  let target = goal;
  let limiterDb = truePeak - LIMITER_MARGIN_DB;
  let previous: { target: number; integrated: number } | null = null;
  let result = { integrated: -Infinity, truePeak: -Infinity };
  let passes = 0;
  while (passes < MAX_PASSES) {
    passes++;
    result = await encodeAndMeter(source, chain(measured, target, truePeak, limiterDb), tags, sink, options);
    // A silent chapter has no loudness to correct.
    if (!measured) break;
    const loudnessOk = Math.abs(result.integrated - goal) <= tolerance;
    const peakOk = result.truePeak <= truePeak - 0.1;
    if (loudnessOk && peakOk) break;
    if (!peakOk) limiterDb -= result.truePeak - (truePeak - 0.1) + 0.1;
    if (!loudnessOk) {
      // About one LU per LU asked while the limiter idles; less when it works: step by the measured slope (secant), bounded.
      const slope = previous && previous.target !== target ? clamp((result.integrated - previous.integrated) / (target - previous.target), 0.2, 1.2) : 1;
      previous = { target, integrated: result.integrated };
      target = clamp(target + (goal - result.integrated) / slope, -40, -5);
    }
  }
  if (measured && (result.truePeak > truePeak || Math.abs(result.integrated - goal) > ACCEPTABLE_LU)) {
    throw new Error(`mastering missed its targets after ${passes} passes: ${result.integrated} LUFS, ${result.truePeak} dBTP`);
  }
  return { ...result, passes };
}
