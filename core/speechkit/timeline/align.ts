/**
 * Fitting speech into a subtitle cue (or a transcript segment) so the dub
 * keeps the source timing. Speech starts on the cue's start. Speech longer
 * than the cue is sped up (tempo, not pitch) up to `maxTempo`; what is
 * still too long runs on into the gap after the cue, but never past the
 * next cue's start: the rest is cut there and reported.
 */

/** The most a clip is sped up: above 1.5x Vietnamese speech loses its tones' clarity. */
export const DEFAULT_MAX_TEMPO = 1.5;

export interface SlotInput {
  /** seconds */
  start: number;
  end: number;
  /** start of the next cue; null for the last one */
  nextStart: number | null;
  /** length of the synthesised speech at normal tempo */
  speechSeconds: number;
  maxTempo?: number;
}

export interface Placement {
  start: number;
  /** 1 = as synthesised; 1.25 = played 25% faster */
  tempo: number;
  /** seconds the speech occupies in the output, after tempo and any cut */
  seconds: number;
  /** seconds of speech past the cue's end, in the gap before the next cue */
  overflow: number;
  /** seconds of (tempo-adjusted) speech cut off at the next cue's start */
  cut: number;
}

export function placeInSlot(input: SlotInput): Placement {
  const maxTempo = input.maxTempo ?? DEFAULT_MAX_TEMPO;
  const available = input.nextStart === null ? Infinity : Math.max(0, input.nextStart - input.start);
  // A cue that overlaps the next one only owns the time until the next one starts.
  const slot = Math.min(Math.max(0, input.end - input.start), available);
  const speech = input.speechSeconds;
  if (speech <= slot) return { start: input.start, tempo: 1, seconds: speech, overflow: 0, cut: 0 };
  const tempo = slot > 0 ? Math.min(maxTempo, speech / slot) : maxTempo;
  let seconds = speech / tempo;
  let cut = 0;
  if (seconds > available) {
    cut = seconds - available;
    seconds = available;
  }
  return { start: input.start, tempo, seconds, overflow: Math.max(0, seconds - slot), cut };
}
