import Joi from 'joi';
import { nativeSynthesisKeys, textField, type NativeSynthesisBody } from '../../core/http/synthesis-fields.ts';
import { SCHEMA_HINT } from '../../core/http/openapi/json-schema.ts';
import { ALLOWED_SAMPLE_RATES, AUDIO_FORMATS, type AudioFormat } from '../../core/speechkit/audio/index.ts';

/** Rates the voice-agent platform asks for (SPEC POST /agent/speech). */
export const AGENT_SAMPLE_RATES = [8000, 16000, 22050, 24000] as const;
/** The compatible route's two reading styles, accepted and ignored. */
export const COMPAT_EMOTIONS = ['natural', 'storytelling'] as const;

const UNSUPPORTED_FORMATS = ['aac', 'flac'];

/**
 * An output format field: the five SPEC formats, with `aac` and `flac`
 * named as unsupported rather than merely unknown, since clients of the
 * compatible API send them.
 */
function formatField(name: string) {
  return Joi.string()
    .custom((value: string, helpers) => {
      if (UNSUPPORTED_FORMATS.includes(value)) return helpers.error('format.unsupported');
      if (!(AUDIO_FORMATS as readonly string[]).includes(value)) return helpers.error('format.unknown');
      return value;
    })
    .messages({
      'format.unsupported': `${name} {#value} is not supported; use one of ${AUDIO_FORMATS.join(', ')}`,
      'format.unknown': `${name} must be one of ${AUDIO_FORMATS.join(', ')}`,
    })
    .meta({ [SCHEMA_HINT]: { enum: [...AUDIO_FORMATS] } });
}


const sampleRate = (name: string) =>
  Joi.number().valid(...ALLOWED_SAMPLE_RATES).messages({ 'any.only': `${name} must be one of ${ALLOWED_SAMPLE_RATES.join(', ')}` });

export interface AudioSpeechBody {
  input: string;
  model?: string | null;
  voice?: string | null;
  response_format?: AudioFormat;
  sample_rate?: number;
  speed: number;
  instructions?: string | null;
  stream_format?: 'audio' | 'sse';
  emotion?: string;
  aiRefine: boolean;
  engine?: string | null;
}

/** `POST /audio/speech`. Unknown fields are ignored: clients of the compatible API send fields this service has no use for. */
export const audioSpeechBody = Joi.object<AudioSpeechBody>({
  input: textField('input'),
  model: Joi.string().trim().max(100).allow(null, '').description('`tts-1`, `tts-1-hd`, `service`, `service-v4` and the compatible API\'s mini-tts name all mean v4; other names are ignored, except a `service-…` name of a missing or retired engine (400)').example('tts-1'),
  voice: Joi.string().trim().max(200).allow(null, '').description('catalogue voice id or display name; omitted: the default voice. The compatible API\'s own voice names are not mapped; `clone_` ids are refused').example('vi-south-female-lan'),
  // A drop-in route: clients that send every optional field, null for "not set", get the defaults (`.empty(null)`).
  response_format: formatField('response_format').empty(null).description('default `mp3`'),
  sample_rate: sampleRate('sample_rate').empty(null).description('default 48000; `pcm` defaults to 24000, `opus` is always 48000 and `ulaw` 8000'),
  speed: Joi.number().min(0.25).max(4).empty(null).default(1).messages({ 'number.min': 'speed must be between 0.25 and 4.0', 'number.max': 'speed must be between 0.25 and 4.0' })
    .description('accepted from 0.25 to 4.0 and clamped to 0.5 to 2.0'),
  instructions: Joi.string().allow('', null).description('accepted and ignored'),
  stream_format: Joi.string().valid('audio', 'sse').empty(null).description('only with `response_format` pcm or ulaw: `audio` sends the bytes chunked, `sse` as server-sent events'),
  emotion: Joi.string().valid(...COMPAT_EMOTIONS).empty(null).description('accepted and ignored'),
  aiRefine: Joi.boolean().empty(null).default(false),
  engine: Joi.string().trim().max(40).allow(null, '').description('`v4`; wins over `model`'),
}).unknown(true).required()
  .example({ model: 'tts-1', input: 'Chào mừng bạn đến với VieNeu. Chúng tôi đọc tiếng Việt tự nhiên như người thật.', voice: 'vi-north-female-mai', response_format: 'mp3' });

export interface TtsStreamBody extends NativeSynthesisBody {
  outputFormat: AudioFormat;
  sampleRate?: number;
}

/** `POST /tts/stream`: the native fields of `POST /tts` plus the output format and rate. */
export const ttsStreamBody = Joi.object<TtsStreamBody>({
  ...nativeSynthesisKeys,
  outputFormat: formatField('outputFormat').default('wav'),
  sampleRate: sampleRate('sampleRate').description('default 48000; `opus` is always 48000 and `ulaw` 8000 (a conflicting rate is 400)'),
}).required()
  .example({ text: 'Xin chào, đây là giọng đọc phát trực tiếp của VieNeu.', voiceId: 'vi-central-female-huong', outputFormat: 'wav' });

export interface AgentSpeechQuery {
  voiceId?: string;
  engine?: string;
}

export const agentSpeechQuery = Joi.object<AgentSpeechQuery>({
  voiceId: Joi.string().trim().max(200).allow('').description('catalogue id or display name; omitted: the default voice').example('vi-north-male-minh'),
  engine: Joi.string().trim().max(40).allow('').description('`v4`'),
}).unknown(true);

export interface AgentSpeechBody {
  message: { type: 'voice-request'; text: string; sampleRate: (typeof AGENT_SAMPLE_RATES)[number] };
}

/** The voice-agent platform's custom-voice request; it sends call and assistant details too, which are ignored. */
export const agentSpeechBody = Joi.object<AgentSpeechBody>({
  message: Joi.object({
    type: Joi.string().valid('voice-request').required().messages({
      'any.only': '"message.type" must be "voice-request"',
      'any.required': '"message.type" is required and must be "voice-request"',
    }),
    text: textField('"message.text"'),
    sampleRate: Joi.number().valid(...AGENT_SAMPLE_RATES).required().messages({
      'any.only': `"message.sampleRate" must be one of ${AGENT_SAMPLE_RATES.join(', ')}`,
      'any.required': `"message.sampleRate" is required (${AGENT_SAMPLE_RATES.join(', ')})`,
    }),
  }).unknown(true).required(),
}).unknown(true).required()
  .example({ message: { type: 'voice-request', text: 'Dạ, em chào anh. Em có thể giúp gì cho anh ạ?', sampleRate: 16000 } });

/** Responses (for the API reference, checked against real responses by the tests). */

export const SPEECH_CONTENT_TYPES = ['audio/mpeg', 'audio/wav', 'audio/ogg', 'audio/basic', 'application/octet-stream', 'text/event-stream'];

export const sampleRateHeader = { description: 'the rate of headerless audio (pcm, ulaw)', schema: Joi.number().integer() };

/** The 503 of POST /tts/stream when streaming capacity is used up. */
export const streamBusyFields = Joi.object({
  fallback: Joi.string().valid('generate').description('with `STREAM_BUSY`: render with POST /tts instead'),
});
