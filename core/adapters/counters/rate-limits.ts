import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateDecision, RateLimiter } from '../../ports/counters.ts';

/**
 * The port asks for any (limit, window) pair per call while rate-limiter-flexible
 * fixes both per limiter instance, so one limiter is built per pair and kept.
 * Each pair gets its own key prefix: two routes sharing a key but not a limit
 * must not count against each other.
 */
export function createCachedRateLimiter(
  build: (opts: { points: number; duration: number; keyPrefix: string }) => RateLimiterAbstract,
): RateLimiter {
  const limiters = new Map<string, RateLimiterAbstract>();
  const limiterFor = (limit: number, windowSeconds: number): RateLimiterAbstract => {
    const id = `${limit}/${windowSeconds}`;
    let limiter = limiters.get(id);
    if (!limiter) {
      limiter = build({ points: limit, duration: windowSeconds, keyPrefix: `rl:${limit}:${windowSeconds}` });
      limiters.set(id, limiter);
    }
    return limiter;
  };

  return {
    async consume(key, limit, windowSeconds): Promise<RateDecision> {
      if (!Number.isSafeInteger(limit) || limit <= 0) throw new TypeError(`limit must be a positive integer, got ${limit}`);
      if (!Number.isSafeInteger(windowSeconds) || windowSeconds <= 0) {
        throw new TypeError(`windowSeconds must be a positive integer, got ${windowSeconds}`);
      }
      try {
        const res = await limiterFor(limit, windowSeconds).consume(key, 1);
        return { allowed: true, limit, remaining: res.remainingPoints, resetMs: res.msBeforeNext };
      } catch (rejection) {
        // Over the limit the library rejects with a RateLimiterRes; anything else is a store failure.
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        return { allowed: false, limit, remaining: 0, resetMs: Math.max(1, rejection.msBeforeNext) };
      }
    },
  };
}
