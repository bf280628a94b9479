import type { RateLimiter } from '../ports/counters.ts';
import { ApiError } from '../errors.ts';

export interface RateOutcome {
  headers: Record<string, string>;
}

/**
 * Consumes one request of the key's budget for a bucket. Returns the
 * X-RateLimit-* headers to send; throws the 429 (with those headers and
 * Retry-After) when the budget is spent.
 */
export async function enforceRateLimit(limiter: RateLimiter, bucket: string, keyId: string, limit: number, windowSeconds = 60): Promise<RateOutcome> {
  const decision = await limiter.consume(`${bucket}:${keyId}`, limit, windowSeconds);
  const resetSeconds = Math.max(1, Math.ceil(decision.resetMs / 1000));
  const headers = {
    'X-RateLimit-Limit': String(decision.limit),
    'X-RateLimit-Remaining': String(Math.max(0, decision.remaining)),
    'X-RateLimit-Reset': String(resetSeconds),
  };
  if (!decision.allowed) {
    throw new ApiError(429, `Rate limit of ${limit} requests per ${windowSeconds === 60 ? 'minute' : `${windowSeconds} seconds`} for this key exceeded. Retry after ${resetSeconds} seconds.`, {
      code: 'RATE_LIMITED',
      retryAfterSeconds: resetSeconds,
      headers,
      compatType: 'rate_limit_exceeded',
    });
  }
  return { headers };
}

/** Seconds a refusal for too many requests at once tells the client to wait: a place frees when any of them ends. */
export const CONCURRENCY_RETRY_AFTER_SECONDS = 1;

/**
 * A refusal for too many requests (or streams) at once: an application 429
 * in SPEC's tell-apart sense, so it carries Retry-After and X-RateLimit-*
 * headers that describe the limit that refused it (`limit` at once, none
 * left), not the key's per-minute budget the request also passed.
 */
export function concurrencyRefusal(message: string, code: string, limit: number): ApiError {
  return new ApiError(429, message, {
    code,
    retryAfterSeconds: CONCURRENCY_RETRY_AFTER_SECONDS,
    headers: { 'X-RateLimit-Limit': String(limit), 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String(CONCURRENCY_RETRY_AFTER_SECONDS) },
    compatType: 'rate_limit_exceeded',
  });
}
