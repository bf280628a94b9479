import Joi from 'joi';
import { nativeSynthesisKeys, type NativeSynthesisBody } from '../../core/http/synthesis-fields.ts';

export type SubmitJobBody = NativeSynthesisBody;

export const submitJobBody = Joi.object<SubmitJobBody>(nativeSynthesisKeys).required();

export const MAX_BATCH_IDS = 50;

export const batchQuery = Joi.object<{ ids: string[] }>({
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
