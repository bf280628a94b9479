/**
 * Remote recogniser: the OpenAI-compatible transcription API
 * (`POST {ASR_URL}/audio/transcriptions`, multipart `file` and `model`,
 * `response_format=verbose_json` for timed segments), as self-hosted
 * Whisper servers (faster-whisper-server / speaches, LocalAI, vLLM) serve it.
 * The upload streams from disk; it is never read into memory here.
 */
import { openAsBlob } from 'node:fs';
import path from 'node:path';
import { AsrFailedError, AsrUnavailableError, tidySegments, type SpeechRecognizer, type Transcript, type TranscribeInput } from './port.ts';

export interface RemoteAsrOptions {
  /** base URL of the API, e.g. `http://whisper:8000/v1` */
  url: string;
  /** `model` form field */
  model: string;
  language: string;
  apiKey: string | null;
  timeoutMs: number;
}

interface VerboseJson {
  language?: unknown;
  duration?: unknown;
  text?: unknown;
  segments?: Array<{ start?: unknown; end?: unknown; text?: unknown }>;
}

export function transcriptionsUrl(base: string): string {
  const trimmed = base.replace(/\/+$/, '');
  return trimmed.endsWith('/audio/transcriptions') ? trimmed : `${trimmed}/audio/transcriptions`;
}

/** Reads verbose_json; a server that gives only `text` yields one segment over the whole recording. */
export function parseVerboseJson(body: unknown, seconds: number): Transcript {
  if (!body || typeof body !== 'object') throw new AsrFailedError('the transcription server did not answer with a JSON object');
  const json = body as VerboseJson;
  const language = typeof json.language === 'string' ? json.language : null;
  if (Array.isArray(json.segments)) {
    const segments = json.segments.map((s, i) => {
      if (typeof s?.start !== 'number' || typeof s?.end !== 'number' || typeof s?.text !== 'string') {
        throw new AsrFailedError(`segment ${i} of the transcription has no numeric start/end or no text`);
      }
      return { start: s.start, end: s.end, text: s.text };
    });
    return { language, segments: tidySegments(segments, seconds) };
  }
  if (typeof json.text === 'string') return { language, segments: tidySegments([{ start: 0, end: seconds, text: json.text }], seconds) };
  throw new AsrFailedError('the transcription has neither segments nor text');
}

export function createRemoteRecognizer(options: RemoteAsrOptions): SpeechRecognizer {
  const endpoint = transcriptionsUrl(options.url);
  return {
    name: 'remote',
    async transcribe(input: TranscribeInput): Promise<Transcript> {
      const form = new FormData();
      form.append('file', await openAsBlob(input.file), path.basename(input.file));
      form.append('model', options.model);
      form.append('language', options.language);
      form.append('response_format', 'verbose_json');
      form.append('timestamp_granularities[]', 'segment');
      form.append('temperature', '0');
      const signal = input.signal ? AbortSignal.any([input.signal, AbortSignal.timeout(options.timeoutMs)]) : AbortSignal.timeout(options.timeoutMs);
      let res: Response;
      try {
        res = await fetch(endpoint, {
          method: 'POST', body: form, signal, headers: options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {},
        });
      } catch (err) {
        const why = (err as Error).name === 'TimeoutError' ? `did not answer within ${options.timeoutMs / 1000} s` : `could not be reached (${(err as Error & { cause?: Error }).cause?.message ?? (err as Error).message})`;
        throw new AsrUnavailableError(`The transcription server ${why}.`, { cause: err });
      }
      const text = await res.text();
      if (res.status >= 500 || res.status === 429) throw new AsrUnavailableError(`The transcription server answered ${res.status}.`);
      if (!res.ok) throw new AsrFailedError(`The transcription server refused the recording (${res.status}): ${text.slice(0, 200)}`);
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw new AsrFailedError('the transcription server did not answer with JSON');
      }
      return parseVerboseJson(body, input.seconds);
    },
    async close() {},
  };
}
