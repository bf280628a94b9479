/**
 * Places one spoken clip on a timeline at its cue: plans tempo, overflow and
 * cut (align.ts), applies the tempo with ffmpeg, cuts at the next cue's
 * start with a short fade, and writes it. Shared by subtitle dubbing and
 * recording dubbing, which keep source timing by the same rules.
 */
import { placeInSlot, type Placement } from './align.ts';
import { changeTempo, fadeOut } from './tempo.ts';
import type { TimelineWriter } from './writer.ts';

export interface Cue {
  /** seconds */
  start: number;
  end: number;
}

export interface FittedClip extends Placement {
  /** seconds of speech as synthesised, before tempo */
  speechSeconds: number;
}

export async function fitClip(
  timeline: TimelineWriter, clip: Buffer, cue: Cue, nextStart: number | null, options: { maxTempo?: number; signal?: AbortSignal } = {},
): Promise<FittedClip> {
  const rate = timeline.sampleRate;
  const speechSeconds = clip.length / 2 / rate;
  const plan = placeInSlot({ start: cue.start, end: cue.end, nextStart, speechSeconds, maxTempo: options.maxTempo });
  let pcm = await changeTempo(clip, rate, plan.tempo, options.signal);
  // Rounding of the start and atempo's own length may differ from the plan by a few samples: the next cue's start is the hard limit.
  const startSample = Math.max(Math.round(cue.start * rate), timeline.samples);
  const limit = nextStart === null ? Infinity : Math.round(nextStart * rate) - startSample;
  // Sped up, the speech holds the plan's length: atempo's output can run a few milliseconds longer, past a cue's end it
  // was sped up to fit (or past the recording a dub is billed by); that tail is rounding, not speech cut off.
  const planned = plan.tempo === 1 ? Infinity : Math.round(plan.seconds * rate);
  const samples = pcm.length >> 1;
  const kept = Math.max(0, Math.min(samples, limit, planned));
  if (kept < samples) pcm = fadeOut(pcm.subarray(0, kept * 2), rate);
  const placed = await timeline.place(startSample, pcm);
  const seconds = (placed.end - placed.start) / rate;
  const cutAtNext = samples > limit ? (samples - Math.max(0, limit)) / rate : 0;
  return { ...plan, start: placed.start / rate, seconds, cut: Math.max(plan.cut, cutAtNext), speechSeconds };
}

/** What happened to one cue's speech, as the subtitle and dub routes report it (seconds, to the millisecond). */
export interface FitReport {
  /** seconds of synthesised speech before any tempo change */
  speechSeconds: number;
  /** 1 = unchanged; above 1 the speech was sped up (pitch kept) */
  tempo: number;
  /** seconds the speech runs past the cue's end, into the gap before the next cue */
  overflow: number;
  /** seconds cut off at the next cue's start (0 unless even the gap was too short) */
  cut: number;
  /** where the cue's speech ends in the file (never after the next cue's start) */
  speechEnd: number;
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

export function fitReport(fitted: FittedClip): FitReport {
  return {
    speechSeconds: round3(fitted.speechSeconds), tempo: round3(fitted.tempo), overflow: round3(fitted.overflow), cut: round3(fitted.cut),
    speechEnd: round3(fitted.start + fitted.seconds),
  };
}
