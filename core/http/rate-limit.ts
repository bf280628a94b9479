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
