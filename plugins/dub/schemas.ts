import Joi from 'joi';
import { EMOTIONS } from '../../config/emotions.ts';

/** The form fields of `POST /dub` besides `audio`. */
export interface DubFields {
  voiceId: string;
  emotion: string;
  temperature?: number;
  engine?: string | null;
  /** accepted as false only: SPEC Billing 6 gives every route the field, and /dub has no text of the caller's to refine */
  aiRefine?: false;
}

/** Why `aiRefine=true` is refused here rather than accepted and ignored: the caller would expect moderation it does not get. */
const AI_REFINE_FALSE = '"aiRefine" must be false on /dub: the recording is re-voiced as transcribed, with no text refinement. Send aiRefine=false or leave it out.';

export const dubFields = Joi.object<DubFields>({
  voiceId: Joi.string().trim().max(200).required(),
  emotion: Joi.string().valid(...EMOTIONS).default('natural'),
  temperature: Joi.number().min(0).max(2),
  engine: Joi.string().trim().max(40).allow(null, ''),
  aiRefine: Joi.boolean().valid(false).messages({ 'any.only': AI_REFINE_FALSE, 'boolean.base': AI_REFINE_FALSE }),
}).required();

/** The whole form, for the API reference (the handler validates `dubFields` and the file). */
export const dubForm = (dubFields as Joi.ObjectSchema).keys({
  audio: Joi.binary().required().description('the Vietnamese recording (wav, mp3, m4a, ogg, flac, webm…), at most 10 MB'),
  voiceId: Joi.string().trim().max(200).required().description('catalogue voice id or display name (clones are not used here)').example('vi-south-male-nam'),
  aiRefine: Joi.boolean().valid(false).description('accepted as `false` only (the default on every route); `true` is 400'),
});

/** Responses (for the API reference, checked against real responses by the tests). */

const alignment = Joi.object({
  index: Joi.number().integer().required().description('segment of the transcript, from 0'),
  start: Joi.number().required(),
  end: Joi.number().required(),
  speechSeconds: Joi.number().required(),
  tempo: Joi.number().required(),
  overflow: Joi.number().required(),
  cut: Joi.number().required(),
  speechEnd: Joi.number().required(),
});

export const dubResponse = Joi.object({
  dubId: Joi.string().required(),
  audioUrl: Joi.string().uri().required().description('the re-voiced WAV, presigned, valid 24 hours'),
  audioUrlExpiresIn: Joi.number().integer().required(),
  duration: Joi.number().required(),
  sampleRate: Joi.number().integer().required(),
  voiceId: Joi.string().required(),
  transcript: Joi.object({
    language: Joi.string().allow(null).required().example('vi'),
    duration: Joi.number().required().description('seconds of the upload'),
    text: Joi.string().allow('').required().example('Xin chào các bạn, hôm nay chúng ta cùng tìm hiểu về lịch sử Hà Nội.'),
    segments: Joi.array().items(Joi.object({ start: Joi.number().required(), end: Joi.number().required(), text: Joi.string().allow('').required() })).required(),
  }).required().description('the source transcript'),
  alignment: Joi.array().items(alignment).required().description('how each segment\'s new speech was fitted to its time'),
});
