import Joi from 'joi';

/**
 * The bodies of refusals, as joi schemas the reference is built from: the
 * native envelope (SPEC "Error body"), the compatible one of
 * `POST /audio/speech`, and the edge's bare page (SPEC "Tell-apart rules").
 * core/http/envelopes.ts writes the first two; core/http/edge writes the third.
 */

export const nativeErrorSchema: Joi.ObjectSchema = Joi.object({
  statusCode: Joi.number().integer().min(400).max(599).required().description('repeats the HTTP status'),
  message: Joi.alternatives(Joi.string(), Joi.array().items(Joi.string())).required()
    .description('what went wrong; validation failures list one entry per rejected field'),
  code: Joi.string().description('machine-readable reason (absent on some refusals); treat unknown values as plain failures'),
  error: Joi.string().description('the status name; never parse it'),
  retryAfterSeconds: Joi.number().integer().min(0).description('also sent as Retry-After'),
  resetAt: Joi.string().isoDate().description('when a daily or weekly cap rolls over'),
  remaining: Joi.number().description('tokens still available under the limit that refused'),
  required: Joi.number().description('tokens the request would have cost'),
  traceId: Joi.string().description('the X-Request-Id of this response'),
}).description('Error body of the native routes')
  .example({ statusCode: 400, message: ['text is required'], error: 'Bad Request', code: 'VALIDATION_FAILED', traceId: '6f1c2d0e-8a4b-4a55-9f0e-2b7f1f0c9d3a' });

export const COMPAT_ERROR_TYPES = [
  'invalid_request_error', 'authentication_error', 'insufficient_quota', 'content_policy_violation', 'rate_limit_exceeded', 'api_error',
] as const;

export const compatErrorSchema: Joi.ObjectSchema = Joi.object({
  error: Joi.object({
    message: Joi.string().required(),
    type: Joi.string().valid(...COMPAT_ERROR_TYPES).required(),
    param: Joi.string().allow(null).required().description('the offending field, or null'),
    code: Joi.valid(null).required().description('always null'),
  }).required(),
}).description('Error body of POST /audio/speech, shaped like the widely used speech endpoint\'s')
  .example({ error: { message: 'input is required', type: 'invalid_request_error', param: 'input', code: null } });

/** The edge's refusal: a small HTML page, no JSON and no X-RateLimit-* headers. */
export const EDGE_PAGE_TYPE = 'text/html';
