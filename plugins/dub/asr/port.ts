/**
 * The speech-recognition port of the dub plugin: a recording in, its
 * Vietnamese transcript out as timed segments. Adapters: in-process
 * (sherpa-onnx, a model directory from ASR_MODEL) and remote (an
 * OpenAI-compatible transcription server at ASR_URL).
 */

export interface TranscriptSegment {
  /** seconds from the start of the recording */
  start: number;
  end: number;
  text: string;
}

export interface Transcript {
  /** as the recogniser reports it (`vi`, `vietnamese`); null when it does not say */
  language: string | null;
  segments: TranscriptSegment[];
}

export interface TranscribeInput {
  /** the uploaded recording on disk */
  file: string;
  /** its duration, from probing */
  seconds: number;
  signal?: AbortSignal;
}

export interface SpeechRecognizer {
  /** `remote` or `sherpa-onnx` */
  readonly name: string;
  transcribe(input: TranscribeInput): Promise<Transcript>;
  close(): Promise<void>;
}

/** The recogniser cannot be reached or loaded (503: retry later or fix the configuration). */
export class AsrUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AsrUnavailableError';
  }
}

/** The recogniser answered, but not with a transcript (502). */
export class AsrFailedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AsrFailedError';
  }
}

/** Segments in time order, within the recording, with their text trimmed; empty ones dropped. */
export function tidySegments(segments: TranscriptSegment[], seconds: number): TranscriptSegment[] {
  return segments
    .map((s) => ({ start: Math.max(0, Math.min(s.start, seconds)), end: Math.max(0, Math.min(s.end, seconds)), text: s.text.replace(/\s+/g, ' ').trim() }))
    .filter((s) => s.text !== '' && s.end > s.start)
    .sort((a, b) => a.start - b.start);
}
