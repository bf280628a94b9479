import Joi from 'joi';
import { EMOTIONS } from '../../config/emotions.ts';

export interface SubmitJobBody {
  text: string;
  voiceId?: string | null;
  emotion: string;
  speed: number;
  engine?: string | null;
  aiRefine: boolean;
}

export const submitJobBody = Joi.object<SubmitJobBody>({
  text: Joi.string().min(1).max(50_000).required().messages({
    'string.max': 'text must be at most 50000 characters',
    'string.empty': 'text must not be empty',
  }),
  voiceId: Joi.string().trim().max(200).allow(null, ''),
  emotion: Joi.string().valid(...EMOTIONS).default('natural'),
  speed: Joi.number().min(0.5).max(2).default(1),
  engine: Joi.string().trim().max(40).allow(null, ''),
  aiRefine: Joi.boolean().default(false),
}).required();

export const MAX_BATCH_IDS = 50;

export const batchQuery = Joi.object({
  ids: Joi.string()
    .required()
    .custom((value: string, helpers) => {
      const ids = [...new Set(value.split(',').map((s) => s.trim()).filter(Boolean))];
      if (ids.length === 0) return helpers.error('any.invalid');
      if (ids.length > MAX_BATCH_IDS) return helpers.error('array.max');
      return ids;
    })
    .messages({
      'any.invalid': 'ids must list at least one job id',
      'array.max': `ids may list at most ${MAX_BATCH_IDS} job ids`,
    }),
});
