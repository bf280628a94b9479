import Joi from 'joi';
import { EMOTIONS } from '../../config/emotions.ts';

/** SPEC Limits: text of `/tts` and `/tts/stream`. */
export const MAX_TEXT_CHARS = 50_000;

/** The native synthesis fields SPEC gives `POST /tts` and `POST /tts/stream` alike. */
export interface NativeSynthesisBody {
  text: string;
  voiceId?: string | null;
  emotion: string;
  speed: number;
  engine?: string | null;
  aiRefine: boolean;
}

export function textField(name: string) {
  return Joi.string().max(MAX_TEXT_CHARS).required().messages({
    'any.required': `${name} is required`,
    'string.empty': `${name} must not be empty`,
    'string.max': `${name} must be at most ${MAX_TEXT_CHARS} characters`,
  });
}

/** Joi keys of the native synthesis fields, to extend with route-specific ones. */
export const nativeSynthesisKeys = {
  text: textField('text'),
  voiceId: Joi.string().trim().max(200).allow(null, ''),
  emotion: Joi.string().valid(...EMOTIONS).default('natural'),
  speed: Joi.number().min(0.5).max(2).default(1),
  engine: Joi.string().trim().max(40).allow(null, ''),
  aiRefine: Joi.boolean().default(false),
};
