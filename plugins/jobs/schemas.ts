import Joi from 'joi';
import { nativeSynthesisKeys, type NativeSynthesisBody } from '../../core/http/synthesis-fields.ts';

export type SubmitJobBody = NativeSynthesisBody;

export const submitJobBody = Joi.object<SubmitJobBody>(nativeSynthesisKeys).required()
  .example({ text: 'Xin chào! Chúc bạn một ngày làm việc thật hiệu quả.', voiceId: 'vi-north-female-mai', speed: 1 });

export const MAX_BATCH_IDS = 50;

export const batchQuery = Joi.object<{ ids: string[] }>({
  ids: Joi.string()
    .description(`job ids separated by commas, at most ${MAX_BATCH_IDS}`)
    .example('job_3f9a2c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b,job_8c7d6e5f-4a3b-4c2d-8e1f-0a9b8c7d6e5f')
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

/** Responses (for the API reference, checked against real responses by the tests). */

export const submitJobResponse = Joi.object({
  jobId: Joi.string().required().example('job_3f9a2c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b'),
  status: Joi.string().valid('queued', 'completed').required().description('`completed` at once when the same audio was already rendered (a cache hit, charged)'),
  message: Joi.string().required(),
  audioUrl: Joi.string().uri().description('only when `completed`: presigned, valid 24 hours'),
  audioUrlExpiresIn: Joi.number().integer().description('seconds (86400)'),
  duration: Joi.number().description('audio seconds'),
}).example({ jobId: 'job_3f9a2c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b', status: 'queued', message: 'Job queued. Poll GET /api/v1/tts/job_3f9a2c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b every 2 to 3 seconds.' });

export const jobResponse = Joi.object({
  jobId: Joi.string().required(),
  status: Joi.string().valid('queued', 'processing', 'completed', 'failed').required(),
  voiceId: Joi.string().required().example('vi-north-female-mai'),
  textLength: Joi.number().integer().required().description('characters submitted (after NFC); billing counts at least 50'),
  createdAt: Joi.string().isoDate().required(),
  completedAt: Joi.string().isoDate(),
  audioUrl: Joi.string().uri().description('only when `completed`: presigned, valid 24 hours'),
  audioUrlExpiresIn: Joi.number().integer(),
  duration: Joi.number().allow(null).description('audio seconds'),
  queuePosition: Joi.number().integer().description('only while `queued`'),
  estimatedWaitSeconds: Joi.number().integer().description('only while `queued`'),
  error: Joi.string().description('only when `failed` (tokens refunded)'),
}).description('A TTS job');

export const batchResponse = Joi.object({
  jobs: Joi.array().items(jobResponse).required().description('the jobs found, in the order asked'),
  missing: Joi.array().items(Joi.string()).required().description('ids that are unknown or not yours'),
});

/** Fields the 400 of routes that accept cloned voices may add (`CLONE_ENGINE_RETIRED`). */
export const cloneRefusalFields = Joi.object({
  engine: Joi.string().description('with `CLONE_ENGINE_RETIRED`: the retired engine the clone was enrolled on'),
});
