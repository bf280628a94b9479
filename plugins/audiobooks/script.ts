/**
 * A chapter's script as the renderer reads it: the title, then every
 * segment's lines, each with the silence that comes before it; and the cut
 * of those units into render parts of about `partChars` characters (about
 * 3 minutes of speech). Pure, so the plan is the same on every retry.
 */

/** Silences of SPEC "Output", in seconds. */
export const SILENCE = {
  /** between paragraphs and lines (segments, and lines within one) */
  paragraph: 0.6,
  afterTitle: 2.5,
  sceneChange: 2,
  fileStart: 0.5,
  fileEnd: 3.5,
  /**
   * Not SPEC's: where a line longer than a part is cut at a sentence end, the
   * pause the engine leaves between sentences (0.14 to 0.2 s measured) that
   * trimming each piece's edges would otherwise take away.
   */
  sentence: 0.2,
} as const;

const ENDS_SENTENCE = /[.!?…;:]["'”’»)\]]*$/u;

export interface ScriptSegment {
  speaker: string | null;
  text: string;
  sceneBreak: boolean;
}

export interface ScriptUnit {
  /** position of its segment; null for the title */
  segment: number | null;
  /** cast speaker, null for the narrator */
  speaker: string | null;
  text: string;
  /** seconds of silence before it */
  gapBefore: number;
}

export interface PartRange {
  /** first unit (inclusive) */
  from: number;
  /** last unit (exclusive) */
  to: number;
}

const SENTENCE_BREAK = /(?<=[.!?…;:]["'”’»)\]]*)\s+/u;

/** Cuts a line into pieces of at most `max` characters: at sentence ends, then at spaces. */
export function packLine(line: string, max: number): string[] {
  if (line.length <= max) return [line];
  const words = line.split(SENTENCE_BREAK).flatMap((sentence) => (sentence.length <= max ? [sentence] : sentence.split(/\s+/u)));
  const out: string[] = [];
  let current = '';
  for (const word of words) {
    for (let w = word; w.length > 0;) {
      const piece = w.slice(0, max);
      w = w.slice(piece.length);
      if (current && current.length + 1 + piece.length > max) {
        out.push(current);
        current = piece;
      } else {
        current = current ? `${current} ${piece}` : piece;
      }
    }
  }
  if (current) out.push(current);
  return out;
}

/** The chapter as units: the title, 2.5 s, then each segment line by line with its gap. */
export function scriptUnits(title: string, segments: Iterable<ScriptSegment>, maxChars: number): ScriptUnit[] {
  const units: ScriptUnit[] = [];
  if (title.trim()) units.push({ segment: null, speaker: null, text: title.trim(), gapBefore: 0 });
  let position = 0;
  let first = true;
  for (const seg of segments) {
    const lines = seg.text.split(/\r?\n/u).map((l) => l.trim()).filter((l) => l.length > 0);
    lines.forEach((line, li) => {
      packLine(line, maxChars).forEach((piece, pi, pieces) => {
        let gap = pi > 0 && ENDS_SENTENCE.test(pieces[pi - 1]) ? SILENCE.sentence : 0;
        if (pi === 0 && li > 0) gap = SILENCE.paragraph;
        if (pi === 0 && li === 0) {
          if (first) gap = units.length > 0 ? SILENCE.afterTitle : 0;
          else gap = seg.sceneBreak ? SILENCE.sceneChange : SILENCE.paragraph;
        }
        units.push({ segment: position, speaker: seg.speaker, text: piece, gapBefore: gap });
      });
    });
    if (lines.length > 0) first = false;
    position++;
  }
  return units;
}

/**
 * The units' silences as heard: a unit with nothing to speak ("* * *", a
 * title of symbols) renders no audio, so its gap would stand next to the
 * following unit's and double it. Its gap moves to the next spoken unit
 * instead (the longer of the two, so a scene change marked by "***" stays a
 * scene change), and nothing comes before the first spoken unit but the
 * file's lead-in. Only gaps change: the units, hence the part plan, do not.
 */
export function audibleGaps(units: ScriptUnit[], speakable: (text: string) => boolean): ScriptUnit[] {
  let spokenBefore = false;
  let carried = 0;
  return units.map((unit) => {
    if (!speakable(unit.text)) {
      carried = Math.max(carried, unit.gapBefore);
      return { ...unit, gapBefore: 0 };
    }
    const gapBefore = spokenBefore ? Math.max(carried, unit.gapBefore) : 0;
    carried = 0;
    spokenBefore = true;
    return { ...unit, gapBefore };
  });
}

/** Consecutive units packed into parts of at most `maxChars` characters (a longer unit stands alone). */
export function planParts(units: ScriptUnit[], maxChars: number): PartRange[] {
  const parts: PartRange[] = [];
  let from = 0;
  let chars = 0;
  units.forEach((unit, i) => {
    if (i > from && chars + unit.text.length > maxChars) {
      parts.push({ from, to: i });
      from = i;
      chars = 0;
    }
    chars += unit.text.length;
  });
  if (units.length > from) parts.push({ from, to: units.length });
  return parts;
}
