import Joi from 'joi';
import { isoCalendarDate } from '../../core/http/validate.ts';

export const MAX_WINDOW_DAYS = 92;
export const DEFAULT_WINDOW_DAYS = 30;

export interface UsageQuery {
  from?: Date;
  to?: Date;
  scope: 'key' | 'account';
}

export const usageQuery = Joi.object<UsageQuery>({
  from: isoCalendarDate().messages({ 'date.format': 'from must be an ISO 8601 date', 'date.base': 'from must be an ISO 8601 date' })
    .description(`start of the window: an ISO 8601 date (\`2026-10-01\`, from 00:00 UTC) or date-time (\`2026-10-01T07:00:00+07:00\`); default ${DEFAULT_WINDOW_DAYS} days before \`to\`; at most ${MAX_WINDOW_DAYS} days`).example('2026-10-01'),
  to: isoCalendarDate().messages({ 'date.format': 'to must be an ISO 8601 date', 'date.base': 'to must be an ISO 8601 date' })
    .description('end of the window: an ISO 8601 date (`2026-11-01` is 00:00 UTC that day) or date-time; default now').example('2026-11-01'),
  scope: Joi.string().valid('key', 'account').default('key').description('this key, or every key of the account'),
});

/** The response (SPEC: Usage), for the API reference. */

const nullableMs = Joi.number().allow(null);

export const usageResponse = Joi.object({
  scope: Joi.string().valid('key', 'account').required(),
  apiKeyId: Joi.string().allow(null).required(),
  userId: Joi.string().allow(null).required(),
  from: Joi.string().isoDate().required(),
  to: Joi.string().isoDate().required(),
  totals: Joi.object({
    requests: Joi.number().required(), ok: Joi.number().required(), queued: Joi.number().required(), cacheHit: Joi.number().required(),
    denied: Joi.number().required().description('4xx, not billed'), error: Joi.number().required().description('5xx or cut short, refunded'),
    tokenCost: Joi.number().required().description('deducted before refunds'), characters: Joi.number().required(), audioSeconds: Joi.number().required(),
    avgGenMs: nullableMs.required(), p95GenMs: nullableMs.required(),
  }).required(),
  byDay: Joi.array().items(Joi.object({
    day: Joi.string().required().example('2026-10-12'), requests: Joi.number().required(), ok: Joi.number().required(), denied: Joi.number().required(),
    error: Joi.number().required(), tokenCost: Joi.number().required(), characters: Joi.number().required(), audioSeconds: Joi.number().required(),
    avgGenMs: nullableMs.required(),
  })).required(),
  byRoute: Joi.array().items(Joi.object({
    route: Joi.string().required().description('logical name: `tts`, `tts_stream`, `audio_speech`, `vapi_speech`, `dialogue`, `dub`, `srt`, …'),
    requests: Joi.number().required(), ok: Joi.number().required(), denied: Joi.number().required(), error: Joi.number().required(),
    tokenCost: Joi.number().required(), avgGenMs: nullableMs.required(),
  })).required(),
  byVoice: Joi.array().items(Joi.object({
    voice: Joi.string().required(), voiceName: Joi.string().allow(null).required(), engine: Joi.string().allow(null).required(),
    requests: Joi.number().required(), tokenCost: Joi.number().required(), audioSeconds: Joi.number().required(), avgGenMs: nullableMs.required(),
    errors: Joi.number().required(),
  })).required().description('top 100 by requests'),
  byErrorCode: Joi.array().items(Joi.object({
    errorCode: Joi.string().required().description('webhook `error.code` vocabulary; refusals are `http_<status>`'),
    statusCode: Joi.number().integer().required(), count: Joi.number().required(), lastAt: Joi.string().isoDate().required(),
  })).required(),
});
