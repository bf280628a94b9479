import { isUnreachableDependency, UNREACHABLE_RETRY_SECONDS } from '../unreachable.ts';
import type Koa from 'koa';
import { ApiError, DomainError, STATUS_NAMES, type ErrorKind } from '../errors.ts';
import type { Logger } from '../logger.ts';

/**
 * The one place errors become response bodies: the native envelope (SPEC:
 * Error body) and the compatible envelope of `POST /audio/speech`.
 */

/** The one table from domain kinds to HTTP statuses. */
export const STATUS_OF_KIND: Record<ErrorKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  payment_required: 402,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  gone: 410,
  too_large: 413,
  unsupported_media: 415,
  unprocessable: 422,
  limited: 429,
  failed: 500,
  upstream_failed: 502,
  unavailable: 503,
};

/** Compatible-envelope types that do not follow from the status (SPEC: a pre-handler 403 such as a plan guard). */
const COMPAT_TYPE_BY_CODE: Record<string, string> = {
  PLAN_ENGINE_NOT_INCLUDED: 'authentication_error',
};

/** Turns anything thrown into an ApiError; unknown failures become a logged 500. */
export function toApiError(err: unknown, logger?: Logger): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof DomainError) {
    const compatType = err.details.code ? COMPAT_TYPE_BY_CODE[err.details.code] : undefined;
    return new ApiError(STATUS_OF_KIND[err.kind], err.messages, { ...err.details, ...(compatType ? { compatType } : {}) });
  }
  const e = err as { status?: number; statusCode?: number; type?: string; message?: string; expose?: boolean };
  const status = e?.status ?? e?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // co-body marks an unparseable JSON body by giving the parser's SyntaxError status 400 and the raw `body`
    // (only a SyntaxError: an upstream client's error of that shape, thrown by a plugin, is not the caller's JSON).
    const bodyParse = status === 400 && err instanceof SyntaxError && e.type === undefined && 'body' in err;
    // The JSON parser refuses a "__proto__" key (prototype pollution): valid JSON, an unacceptable field, as any unknown one.
    if (bodyParse && /forbidden prototype property/.test(e.message ?? '')) {
      return new ApiError(400, ['"__proto__" is not allowed'], { code: 'VALIDATION_FAILED' });
    }
    if (bodyParse) {
      // Strict parsing takes an object or an array only: `null`, `"abc"` or `5` is JSON, just not a request body.
      const scalar = /only supports object and array/.test(e.message ?? '');
      return new ApiError(400, scalar ? 'The request body must be a JSON object.' : 'Request body is not valid JSON.', { code: 'INVALID_JSON' });
    }
    switch (e.type) {
      case 'entity.too.large':
        return new ApiError(413, 'Request body is too large.', { code: 'PAYLOAD_TOO_LARGE' });
      case 'entity.parse.failed':
        return new ApiError(400, 'Request body is not valid JSON.', { code: 'INVALID_JSON' });
      case 'encoding.unsupported':
      case 'charset.unsupported':
        return new ApiError(415, 'Unsupported body encoding.', { code: 'UNSUPPORTED_MEDIA_TYPE' });
      default:
        return new ApiError(status, e.expose && e.message ? e.message : STATUS_NAMES[status] ?? 'Request refused');
    }
  }
  if (isUnreachableDependency(err)) {
    logger?.warn('a store or broker could not be reached or take the write; answered 503', { err: err as Error });
    return new ApiError(503, 'A service this request needs is unavailable right now. Nothing was charged for a request that failed this way; retry in a few seconds.', {
      code: 'SERVICE_UNAVAILABLE', retryAfterSeconds: UNREACHABLE_RETRY_SECONDS,
    });
  }
  logger?.error('unhandled error', { err: err instanceof Error ? err : new Error(String(err)) });
  return new ApiError(500, 'Internal error. Nothing was charged for a request that failed this way.');
}

export function nativeBody(err: ApiError, traceId: string): Record<string, unknown> {
  const f = err.fields;
  if (f.bare) return { statusCode: err.status, message: err.messages };
  const body: Record<string, unknown> = {
    statusCode: err.status,
    message: err.messages,
    error: STATUS_NAMES[err.status] ?? 'Error',
  };
  if (f.code) body.code = f.code;
  if (f.retryAfterSeconds !== undefined) body.retryAfterSeconds = f.retryAfterSeconds;
  if (f.resetAt !== undefined) body.resetAt = f.resetAt;
  if (f.remaining !== undefined) body.remaining = f.remaining;
  if (f.required !== undefined) body.required = f.required;
  if (f.extra) Object.assign(body, f.extra);
  body.traceId = traceId;
  return body;
}

const COMPAT_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'insufficient_quota',
  404: 'invalid_request_error',
  405: 'invalid_request_error',
  409: 'invalid_request_error',
  413: 'invalid_request_error',
  415: 'invalid_request_error',
  422: 'content_policy_violation',
  429: 'rate_limit_exceeded',
};

export function compatBody(err: ApiError): Record<string, unknown> {
  const type = err.fields.compatType ?? COMPAT_TYPES[err.status] ?? 'api_error';
  const message = Array.isArray(err.messages) ? err.messages.join('; ') : err.messages;
  return { error: { message, type, param: err.fields.param ?? null, code: null } };
}

/** Writes an error response in the envelope the route asked for. */
export function sendError(ctx: Koa.Context, err: ApiError, envelope: 'native' | 'compat', requestId: string): void {
  ctx.status = err.status;
  for (const [name, value] of Object.entries(err.fields.headers ?? {})) ctx.set(name, value);
  if (err.fields.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(err.fields.retryAfterSeconds));
  ctx.body = envelope === 'compat' ? compatBody(err) : nativeBody(err, requestId);
}
