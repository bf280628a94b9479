/**
 * SubRip (.srt) parsing: UTF-8 with or without a BOM (or UTF-16 with one), CRLF or LF line ends,
 * blocks separated by blank lines, each block a cue number, a timing line
 * `HH:MM:SS,mmm --> HH:MM:SS,mmm` and one or more lines of text. Style tags
 * (`<i>`, `<b>`, `<font …>`) and ASS overrides (`{\an8}`) are stripped; they
 * are never read aloud. A malformed cue is an error naming its number (or its
 * position when the number itself is what is wrong) and the line.
 */

export interface SubtitleCue {
  /** the cue's own number */
  index: number;
  /** seconds */
  start: number;
  end: number;
  /** spoken text: tags stripped, lines joined with a space */
  text: string;
}

export class SrtError extends Error {
  constructor(message: string, readonly cue: number | null, readonly line: number | null) {
    super(message);
    this.name = 'SrtError';
  }
}

const TIMING = /^(\d{1,3}):([0-5]\d):([0-5]\d)[,.](\d{3})\s*-->\s*(\d{1,3}):([0-5]\d):([0-5]\d)[,.](\d{3})(?:\s+.*)?$/;
const TAG = /<\/?[a-zA-Z][^<>]*>|\{\\[^{}]*\}/g;

const seconds = (h: string, m: string, s: string, ms: string) => Number(h) * 3600 + Number(m) * 60 + Number(s) + Number(ms) / 1000;

/** Spoken text of a cue's lines. */
export function cueText(lines: string[]): string {
  return lines.map((l) => l.replace(TAG, '').trim()).filter(Boolean).join(' ').replace(/\s+/g, ' ').trim();
}

/**
 * Decodes the file as UTF-8, or as UTF-16 when it starts with a UTF-16 byte
 * order mark (what Windows editors write as "Unicode"); the BOM is dropped.
 * Bytes that are not valid in that encoding are an error.
 */
export function decodeSrt(bytes: Uint8Array): string {
  const encoding = bytes[0] === 0xff && bytes[1] === 0xfe ? 'utf-16le' : bytes[0] === 0xfe && bytes[1] === 0xff ? 'utf-16be' : 'utf-8';
  try {
    return new TextDecoder(encoding, { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    const named = encoding === 'utf-8' ? 'UTF-8' : 'UTF-16';
    throw new SrtError(`The subtitle file is not valid ${named} text. Save it as UTF-8 and upload it again.`, null, null);
  }
}

export function parseSrt(source: string): SubtitleCue[] {
  const lines = source.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/);
  const cues: SubtitleCue[] = [];
  /** the last cue's timing line, for refusals that name it */
  let previousLine = 0;
  let i = 0;
  while (i < lines.length) {
    while (i < lines.length && lines[i].trim() === '') i++;
    if (i >= lines.length) break;
    const blockLine = i + 1;
    const position = cues.length + 1;
    const numberText = lines[i].trim();
    // Nine digits at most: a longer "number" is not one a subtitle file holds (and would print as 1e+23).
    if (!/^\d{1,9}$/.test(numberText)) {
      throw new SrtError(`Cue ${position} (line ${blockLine}): expected a cue number, found "${numberText.slice(0, 40)}".`, position, blockLine);
    }
    const index = Number(numberText);
    const timingLine = lines[i + 1]?.trim() ?? '';
    const timing = TIMING.exec(timingLine);
    if (!timing) {
      throw new SrtError(`Cue ${index} (line ${blockLine + 1}): the timing "${timingLine.slice(0, 60)}" is not HH:MM:SS,mmm --> HH:MM:SS,mmm.`, index, blockLine + 1);
    }
    const start = seconds(timing[1], timing[2], timing[3], timing[4]);
    const end = seconds(timing[5], timing[6], timing[7], timing[8]);
    const [startText, endText] = timingLine.split('-->').map((s) => s.trim().split(/\s/)[0]);
    if (end === start) {
      throw new SrtError(`Cue ${index} (line ${blockLine + 1}): it starts and ends at ${startText}, so it has no duration.`, index, blockLine + 1);
    }
    if (end < start) {
      throw new SrtError(`Cue ${index} (line ${blockLine + 1}): it ends (${endText}) before it starts.`, index, blockLine + 1);
    }
    const previous = cues.at(-1);
    if (previous && start < previous.start) {
      throw new SrtError(`Cue ${index} (line ${blockLine + 1}): it starts before cue ${previous.index} (line ${previousLine}); cues must be in time order.`, index, blockLine + 1);
    }
    // One voice speaks the file: a cue starting with the one before would be cut to nothing at its start, yet billed.
    if (previous && start === previous.start) {
      throw new SrtError(`Cue ${index} (line ${blockLine + 1}): it starts at ${startText}, as cue ${previous.index} (line ${previousLine}) does; each cue must start after the one before. Join the two cues' text into one cue.`, index, blockLine + 1);
    }
    i += 2;
    const textLines: string[] = [];
    // A number followed by a timing line is the next cue even without the blank line before it.
    while (i < lines.length && lines[i].trim() !== '' && !(/^\d+$/.test(lines[i].trim()) && TIMING.test(lines[i + 1]?.trim() ?? ''))) {
      textLines.push(lines[i++]);
    }
    const text = cueText(textLines);
    if (!text) throw new SrtError(`Cue ${index} (line ${blockLine}): it has no text.`, index, blockLine);
    cues.push({ index, start, end, text });
    previousLine = blockLine + 1;
  }
  if (cues.length === 0) throw new SrtError('The subtitle file has no cues.', null, null);
  return cues;
}
