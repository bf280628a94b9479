import Joi from 'joi';
import { SCHEMA_HINT } from './openapi/json-schema.ts';
import { EMOTIONS } from '../../config/emotions.ts';
import { countCharacters } from '../billing/pricing.ts';
import { hasLongCombiningRun, MAX_COMBINING_RUN } from '../speechkit/text/unicode.ts';

/** SPEC Limits: text of `/tts` and `/tts/stream`. */
export const MAX_TEXT_CHARS = 50_000;

/**
 * JSON body limit of the synthesis routes: 50,000 characters may arrive as
 * up to 150,000 decomposed code points, each up to 6 bytes as a JSON escape
 * (or 12 for an astral character), so 512 kB would refuse valid texts.
 */
export const TEXT_BODY_LIMIT = '1mb';

/** The native synthesis fields SPEC gives `POST /tts` and `POST /tts/stream` alike. */
export interface NativeSynthesisBody {
  text: string;
  voiceId?: string | null;
  emotion: string;
  speed: number;
  engine?: string | null;
  aiRefine: boolean;
}

/** NFC can turn one code unit into up to three code points; shorter strings cannot pass the limit. */
const NFC_MAX_GROWTH = 3;

/**
 * A synthesis text field. Its length is counted as billing counts it
 * (SPEC: characters after NFC, i.e. code points), not in UTF-16 units, so an
 * emoji is one character and decomposed Vietnamese counts as composed.
 * A run of more than 30 combining marks is refused first: no language needs
 * one, and normalising it is quadratic (see core/speechkit/text/unicode.ts).
 */
/** The text as submitted, never trimmed: its length is what is billed and limited (SPEC Billing 1). */
export function textField(name: string) {
  return Joi.string()
    .required()
    .custom((value: string, helpers) => {
      if (hasLongCombiningRun(value)) return helpers.error('text.marks');
      if (value.length * NFC_MAX_GROWTH > MAX_TEXT_CHARS && countCharacters(value) > MAX_TEXT_CHARS) return helpers.error('text.max');
      return value;
    })
    .messages({
      'any.required': `${name} is required`,
      'string.empty': `${name} must not be empty`,
      'text.max': `${name} must be at most ${MAX_TEXT_CHARS} characters`,
      'text.marks': `${name} has a run of more than ${MAX_COMBINING_RUN} combining marks`,
    })
    // maxLength counts UTF-16 units in JSON Schema; the limit here counts characters after NFC, as billing does.
    .meta({ [SCHEMA_HINT]: { minLength: 1 } })
    .description(`Vietnamese text to speak, at most ${MAX_TEXT_CHARS} characters (counted after Unicode NFC, as billed); English words are read without markup`)
    .example('Xin chào! Hôm nay trời Hà Nội trong xanh, rất hợp để đi dạo quanh Hồ Gươm.');
}

/** Joi keys of the native synthesis fields, to extend with route-specific ones. */
export const nativeSynthesisKeys = {
  text: textField('text'),
  voiceId: Joi.string().trim().max(200).allow(null, '').description('catalogue id, display name, or your own `clone_` id; omitted: the default voice').example('vi-north-female-mai'),
  emotion: Joi.string().valid(...EMOTIONS).default('natural').description('accepted, billed and ignored by v4 (no reading styles); write cue tags such as [cười] in the text instead'),
  speed: Joi.number().min(0.5).max(2).default(1),
  engine: Joi.string().trim().max(40).allow(null, '').description('`v4` (the default); `v3` is retired').example('v4'),
  aiRefine: Joi.boolean().default(false).description('moderate and normalise pronunciation (formulas, acronyms, mixed English) for a surcharge'),
};
