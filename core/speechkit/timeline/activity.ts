/**
 * Where the speech is in a clip of s16le mono PCM: short frames whose RMS
 * level is above a threshold (dBFS) are speech. Used to trim the silence an
 * engine leaves around a clip (so a cue's speech starts on its timecode and a
 * dialogue's pauses are exactly the configured ones) and to cut a recording
 * into utterances at its pauses.
 */

export interface ActivityOptions {
  /** analysis frame, milliseconds (default 10) */
  frameMs?: number;
  /** a frame at or above this RMS level is speech (default -45 dBFS) */
  thresholdDb?: number;
}

export interface SampleSpan {
  /** first sample */
  start: number;
  /** one past the last sample */
  end: number;
}

const DEFAULT_FRAME_MS = 10;
const DEFAULT_THRESHOLD_DB = -45;

function frameSamples(sampleRate: number, frameMs: number): number {
  return Math.max(1, Math.round((sampleRate * frameMs) / 1000));
}

/** RMS level of each frame, in dBFS (-Infinity for digital silence). */
export function frameLevelsDb(pcm: Buffer, sampleRate: number, frameMs = DEFAULT_FRAME_MS): Float64Array {
  const size = frameSamples(sampleRate, frameMs);
  const samples = pcm.length >> 1;
  const frames = Math.ceil(samples / size);
  const levels = new Float64Array(frames);
  for (let f = 0; f < frames; f++) {
    const from = f * size;
    const to = Math.min(samples, from + size);
    let sum = 0;
    for (let i = from; i < to; i++) {
      const v = pcm.readInt16LE(i * 2) / 32768;
      sum += v * v;
    }
    levels[f] = 10 * Math.log10(sum / (to - from));
  }
  return levels;
}

/** First and last speech sample of a clip; null when it is all silence. */
export function speechBounds(pcm: Buffer, sampleRate: number, options: ActivityOptions = {}): SampleSpan | null {
  const frameMs = options.frameMs ?? DEFAULT_FRAME_MS;
  const threshold = options.thresholdDb ?? DEFAULT_THRESHOLD_DB;
  const levels = frameLevelsDb(pcm, sampleRate, frameMs);
  const size = frameSamples(sampleRate, frameMs);
  let first = -1;
  let last = -1;
  for (let f = 0; f < levels.length; f++) {
    if (levels[f] < threshold) continue;
    if (first < 0) first = f;
    last = f;
  }
  if (first < 0) return null;
  return { start: first * size, end: Math.min(pcm.length >> 1, (last + 1) * size) };
}

/** The clip without its leading and trailing silence (empty when it is all silence). */
export function trimSilence(pcm: Buffer, sampleRate: number, options: ActivityOptions = {}): Buffer {
  const bounds = speechBounds(pcm, sampleRate, options);
  if (!bounds) return pcm.subarray(0, 0);
  return pcm.subarray(bounds.start * 2, bounds.end * 2);
}

export interface SpanOptions extends ActivityOptions {
  /** a pause at least this long ends an utterance (default 300 ms) */
  minPauseMs?: number;
  /** utterances shorter than this are dropped as clicks (default 120 ms) */
  minSpeechMs?: number;
  /** longer utterances are split at their quietest frame (default 25 s: what Whisper-style models take at once) */
  maxSpanSeconds?: number;
}

/** Utterances of a recording: speech separated by pauses, each at most `maxSpanSeconds` long. */
export function speechSpans(pcm: Buffer, sampleRate: number, options: SpanOptions = {}): SampleSpan[] {
  const frameMs = options.frameMs ?? DEFAULT_FRAME_MS;
  const threshold = options.thresholdDb ?? DEFAULT_THRESHOLD_DB;
  const minPause = Math.ceil((options.minPauseMs ?? 300) / frameMs);
  const minSpeech = Math.ceil((options.minSpeechMs ?? 120) / frameMs);
  const maxFrames = Math.floor(((options.maxSpanSeconds ?? 25) * 1000) / frameMs);
  const levels = frameLevelsDb(pcm, sampleRate, frameMs);
  const size = frameSamples(sampleRate, frameMs);
  const total = pcm.length >> 1;

  const frameSpans: Array<[number, number]> = [];
  let start = -1;
  let silentRun = 0;
  for (let f = 0; f <= levels.length; f++) {
    const speech = f < levels.length && levels[f] >= threshold;
    if (speech) {
      if (start < 0) start = f;
      silentRun = 0;
      continue;
    }
    if (start < 0) continue;
    silentRun++;
    if (silentRun >= minPause || f === levels.length) {
      const end = f - silentRun + 1;
      if (end - start >= minSpeech) frameSpans.push([start, end]);
      start = -1;
      silentRun = 0;
    }
  }
  const split = frameSpans.flatMap(([s, e]) => splitLong(levels, s, e, maxFrames));
  return split.map(([s, e]) => ({ start: s * size, end: Math.min(total, e * size) }));
}

/** Splits [start, end) at its quietest frames until every part is at most maxFrames long. */
function splitLong(levels: Float64Array, start: number, end: number, maxFrames: number): Array<[number, number]> {
  if (end - start <= maxFrames) return [[start, end]];
  // Cut in the second half of the allowed length, where it is quietest.
  let cut = start + maxFrames;
  for (let f = start + Math.floor(maxFrames / 2); f < start + maxFrames; f++) if (levels[f] < levels[cut]) cut = f;
  return [[start, cut], ...splitLong(levels, cut, end, maxFrames)];
}
