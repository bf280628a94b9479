/**
 * Chunk boundaries for streaming. The engine renders one chunk at a time, so
 * the first chunk decides time-to-first-audio and every boundary is a place
 * where a natural pause is acceptable: sentence ends first, then commas in
 * long sentences, then spaces as a last resort.
 */
import { segmentCues } from './cues.ts';

export interface SplitOptions {
  /** hard ceiling on a chunk's length in characters */
  maxChars?: number;
  /** sentences longer than this are cut at commas */
  clauseChars?: number;
}

const DEFAULTS: Required<SplitOptions> = { maxChars: 250, clauseChars: 120 };

/**
 * Sentence terminators, with closing quotes and brackets kept on the sentence
 * they end. The lookbehind starts a match only at the first terminator of a
 * run, so a long run of dots is scanned once, not once per dot.
 */
const SENTENCE_END = /(?<![.!?…;:])[.!?…;:]+["'”’»)\]]*(?=\s|$)/gu;
const SPEAKABLE = /[\p{L}\p{N}]/u;
/** A full stop after these (English titles, initials) does not end a sentence. */
const NOT_A_SENTENCE_END = /(?:^|\s)(?:Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|vs|etc|Inc|Ltd|Co|No|e\.g|i\.e|\p{Lu})\.$/u;
/** Longer than any of those words with the space before it: the test never needs more of the sentence. */
const ABBREVIATION_WINDOW = 8;

function splitSentences(line: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (const m of line.matchAll(SENTENCE_END)) {
    const end = m.index! + m[0].length;
    if (m[0] === '.' && NOT_A_SENTENCE_END.test(line.slice(Math.max(start, end - ABBREVIATION_WINDOW), end))) continue;
    out.push(line.slice(start, end));
    start = end;
  }
  out.push(line.slice(start));
  return out.map((s) => s.trim()).filter(Boolean);
}

/** Packs comma-separated clauses greedily so that no piece exceeds `limit` unless one clause alone does. */
function splitClauses(sentence: string, limit: number): string[] {
  const clauses = sentence.split(/(?<=,)\s+/u);
  const out: string[] = [];
  let current = '';
  for (const clause of clauses) {
    const joined = current ? `${current} ${clause}` : clause;
    if (current && joined.length > limit) {
      out.push(current);
      current = clause;
    } else {
      current = joined;
    }
  }
  if (current) out.push(current);
  return out;
}

/** Cuts at spaces so that every piece is at most `limit`; a single longer word is cut hard. Appends to `out`. */
function splitAtSpaces(text: string, limit: number, out: string[]): void {
  let current = '';
  for (const word of text.split(/\s+/u)) {
    for (let at = 0; at < word.length; at += limit) {
      const piece = word.slice(at, at + limit);
      if (current && current.length + 1 + piece.length > limit) {
        out.push(current);
        current = piece;
      } else {
        current = current ? `${current} ${piece}` : piece;
      }
    }
  }
  if (current) out.push(current);
}

function chunkText(text: string, opts: Required<SplitOptions>, out: string[]): void {
  for (const line of text.split(/\n+/u)) {
    for (const sentence of splitSentences(line)) {
      const clauses = sentence.length > opts.clauseChars ? splitClauses(sentence, opts.clauseChars) : [sentence];
      for (const clause of clauses) splitAtSpaces(clause, opts.maxChars, out);
    }
  }
}

/**
 * Splits prepared text into ordered, non-empty chunks. Cue tags become chunks
 * of their own; chunks with nothing speakable (a lone "…") are dropped.
 */
export function splitChunks(text: string, options: SplitOptions = {}): string[] {
  const opts = { ...DEFAULTS, ...options };
  if (opts.maxChars < 1 || opts.clauseChars < 1) throw new RangeError('chunk limits must be positive');
  const out: string[] = [];
  for (const segment of segmentCues(text)) {
    if (segment.kind === 'cue') {
      out.push(`[${segment.cue}]`);
      continue;
    }
    // Pushed one by one: a long text has more chunks than a spread call may pass as arguments.
    const chunks: string[] = [];
    chunkText(segment.text, opts, chunks);
    for (const chunk of chunks) if (SPEAKABLE.test(chunk)) out.push(chunk);
  }
  return out;
}

/**
 * Whether `splitChunks` would give at least one chunk, without cutting the
 * text: chunking keeps every character but whitespace in some chunk, and
 * keeps a chunk when it holds a letter or a digit, so a segment yields one
 * exactly when it holds one (a cue is always a chunk). For the requests that
 * only refuse unspeakable text before billing; the unit tests compare the two.
 */
export function hasSpeakableChunk(text: string): boolean {
  return chunkKinds(text).speakable;
}

/**
 * Whether any chunk would be words rather than a cue tag: every engine
 * renders a cue as a pause (README, cue tags), so a text of cues alone is
 * silence. A piece of a larger whole (a dialogue turn, an audiobook unit)
 * may be a pause; a request's whole text may not.
 */
export function hasSpokenChunk(text: string): boolean {
  return chunkKinds(text).spoken;
}

/** Both answers in one pass over the text (the accept path asks for both): words make it spoken, and so speakable. */
export function chunkKinds(text: string): { speakable: boolean; spoken: boolean } {
  let cue = false;
  for (const segment of segmentCues(text)) {
    if (segment.kind === 'cue') cue = true;
    else if (SPEAKABLE.test(segment.text)) return { speakable: true, spoken: true };
  }
  return { speakable: cue, spoken: false };
}
