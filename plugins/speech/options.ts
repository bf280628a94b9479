/**
 * Request decisions that need no I/O: which engine a compatible `model`
 * names, which format and rate a request gets, and how speed is clamped.
 * Kept pure so every rule of SPEC can be checked without a server.
 */
import type { VoiceCatalog } from '../../core/catalog.ts';
import { DomainError } from '../../core/errors.ts';
import { RETIRED_ENGINES } from '../../config/engines.ts';
import { DEFAULT_SAMPLE_RATE, FIXED_RATES, type AudioFormat } from '../../core/speechkit/audio/index.ts';

/** Model names of the compatible API that mean "the default engine" (SPEC POST /audio/speech). */
export const COMPAT_MODEL_NAMES = new Set(['tts-1', 'tts-1-hd', 'gpt-4o-mini-tts', 'service', 'vieneu']);
/** `service-v4`, `vieneu-v4`: a brand prefix naming an engine. */
const ENGINE_MODEL = /^(service|vieneu)-(.+)$/;

/**
 * The engine of `POST /audio/speech`: `engine` wins when sent; otherwise
 * the model name decides, and a model this service does not know is ignored.
 */
export function compatEngine(body: { engine?: string | null; model?: string | null }, catalog: VoiceCatalog): string {
  if (body.engine) return catalog.resolveEngine(body.engine, 'engine');
  const model = body.model?.trim().toLowerCase();
  if (!model || COMPAT_MODEL_NAMES.has(model)) return catalog.defaultEngine();
  const named = ENGINE_MODEL.exec(model);
  if (!named) return catalog.defaultEngine();
  const engine = named[2];
  if (RETIRED_ENGINES.has(engine)) {
    throw new DomainError('invalid', `Model "${body.model}" is retired: engine ${engine} was retired on 2026-09-24. Use model "${named[1]}-v4" (or tts-1) with a voice from GET /voices?engine=v4.`, {
      code: 'ENGINE_RETIRED', param: 'model',
    });
  }
  if (!catalog.engines().some((e) => e.key === engine)) {
    const available = catalog.engines().map((e) => `${named[1]}-${e.key}`).join(', ');
    throw new DomainError('invalid', `Model "${body.model}" names engine "${engine}", which does not exist. Available: ${available}.`, { code: 'UNKNOWN_ENGINE', param: 'model' });
  }
  return engine;
}

export interface OutputRequest {
  /** as sent; undefined when the request named no format */
  format: AudioFormat | undefined;
  sampleRate: number | undefined;
  defaultFormat: AudioFormat;
  /** default rate of headerless PCM (24000 on the compatible route, 48000 elsewhere) */
  pcmDefaultRate: number;
  /** request field names, for error messages and the compatible envelope's `param` */
  params: { format: string; sampleRate: string };
}

export interface OutputChoice {
  format: AudioFormat;
  sampleRate: number;
  /** the default format had no encoder and WAV was chosen instead */
  fellBack: boolean;
}

/**
 * Format and rate per SPEC "Audio formats": opus is always 48000 Hz and
 * ulaw 8000 Hz (another explicit rate is 400); a format without an encoder
 * is 503 naming it, unless the request named no format, which falls back to WAV.
 */
export function chooseOutput(request: OutputRequest, canEncode: (format: AudioFormat) => boolean): OutputChoice {
  let format = request.format ?? request.defaultFormat;
  const fixed = FIXED_RATES[format];
  if (fixed !== undefined && request.sampleRate !== undefined && request.sampleRate !== fixed) {
    throw new DomainError('invalid', `${format} is always ${fixed} Hz; "${request.params.sampleRate}" ${request.sampleRate} conflicts with it. Omit it or send ${fixed}.`, {
      code: 'SAMPLE_RATE_CONFLICT', param: request.params.sampleRate,
    });
  }
  let fellBack = false;
  if (!canEncode(format)) {
    if (request.format !== undefined) {
      throw new DomainError('unavailable', `No ${format} encoder is available on this worker right now. Retry shortly, or ask for wav, pcm or ulaw.`, {
        code: 'ENCODER_UNAVAILABLE', param: request.params.format, usageCode: 'synthesis_unavailable',
      });
    }
    format = 'wav';
    fellBack = true;
  }
  const sampleRate = FIXED_RATES[format] ?? request.sampleRate ?? (format === 'pcm' ? request.pcmDefaultRate : DEFAULT_SAMPLE_RATE);
  return { format, sampleRate, fellBack };
}

/** SPEC: speed 0.25 to 4.0 is accepted on the compatible route and clamped to what engines render. */
export function clampSpeed(speed: number): number {
  return Math.min(2, Math.max(0.5, speed));
}

/** `stream_format` only makes sense for headerless audio, which can be cut anywhere. */
export function checkStreamFormat(streamFormat: string | undefined, format: AudioFormat): void {
  if (streamFormat !== undefined && format !== 'pcm' && format !== 'ulaw') {
    throw new DomainError('invalid', `"stream_format" ${streamFormat} needs "response_format" pcm or ulaw, not ${format}.`, { code: 'STREAM_FORMAT_UNSUPPORTED', param: 'stream_format' });
  }
}
