import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateDecision, RateLimiter } from '../../ports/counters.ts';

/**
 * The port asks for any (limit, window) pair per call while rate-limiter-flexible
 * fixes both per limiter instance, so one limiter is built per pair and kept.
 * Each pair gets its own key prefix: two routes sharing a key but not a limit
 * must not count against each other.
 */
export function createCachedRateLimiter(
  build: (opts: { points: number; duration: number; blockDuration: number; keyPrefix: string }) => RateLimiterAbstract,
): RateLimiter {
  const limiters = new Map<string, RateLimiterAbstract>();
  const limiterFor = (limit: number, windowSeconds: number, blockSeconds: number): RateLimiterAbstract => {
    const id = `${limit}/${windowSeconds}/${blockSeconds}`;
    let limiter = limiters.get(id);
    if (!limiter) {
      // Without a block the prefix is the one keys always had, so counts survive an upgrade.
      const keyPrefix = blockSeconds === 0 ? `rl:${limit}:${windowSeconds}` : `rl:${limit}:${windowSeconds}:b${blockSeconds}`;
      limiter = build({ points: limit, duration: windowSeconds, blockDuration: blockSeconds, keyPrefix });
      limiters.set(id, limiter);
    }
    return limiter;
  };
  const positive = (name: string, n: number) => {
    if (!Number.isSafeInteger(n) || n <= 0) throw new TypeError(`${name} must be a positive integer, got ${n}`);
  };

  return {
    async consume(key, limit, windowSeconds, blockSeconds = 0): Promise<RateDecision> {
      positive('limit', limit);
      positive('windowSeconds', windowSeconds);
      if (blockSeconds !== 0) positive('blockSeconds', blockSeconds);
      try {
        const res = await limiterFor(limit, windowSeconds, blockSeconds).consume(key, 1);
        return { allowed: true, limit, remaining: res.remainingPoints, resetMs: res.msBeforeNext };
      } catch (rejection) {
        // Over the limit the library rejects with a RateLimiterRes; anything else is a store failure.
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        return { allowed: false, limit, remaining: 0, resetMs: Math.max(1, rejection.msBeforeNext) };
      }
    },
  };
}
