/**
 * Counters port: short-lived shared state. Rate limits, idempotency records
 * and stream slots. Adapters: core/adapters/counters/memory.ts (embedded,
 * rate-limiter-flexible in memory) and core/adapters/counters/redis.ts
 * (ioredis + rate-limiter-flexible).
 */

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** milliseconds until the window rolls over (or, for a blocked key, until the block ends) */
  resetMs: number;
}

export interface RateLimiter {
  /**
   * consume one point of `limit` per `windowSeconds` for `key`; with
   * `blockSeconds`, the request that goes past the limit blocks the key for
   * that long from that moment (a lockout), whatever is left of the window
   */
  consume(key: string, limit: number, windowSeconds: number, blockSeconds?: number): Promise<RateDecision>;
}

export type IdempotencyRecord =
  /** `startedAt`: when the request holding the key began (ms since the epoch); absent in records of older versions, which are never taken over */
  | { state: 'in_flight'; fingerprint: string; startedAt?: number }
  | { state: 'done'; fingerprint: string; status: number; body: unknown; headers?: Record<string, string> };

export interface IdempotencyStore {
  /** reserves the key when absent; returns the existing record otherwise */
  begin(key: string, fingerprint: string, ttlSeconds: number): Promise<IdempotencyRecord | null>;
  complete(key: string, record: Extract<IdempotencyRecord, { state: 'done' }>, ttlSeconds: number): Promise<void>;
  /** drops an in-flight reservation after a failure, so the client may retry */
  abandon(key: string): Promise<void>;
}

export interface SlotPool {
  /** takes one of `max` slots under `key`; the slot expires after ttl unless released */
  acquire(key: string, max: number, ttlSeconds: number): Promise<{ ok: boolean; slotId: string | null; inUse: number }>;
  release(key: string, slotId: string): Promise<void>;
  inUse(key: string): Promise<number>;
}

export interface Counters {
  rateLimiter: RateLimiter;
  idempotency: IdempotencyStore;
  slots: SlotPool;
  ping(): Promise<void>;
  close(): Promise<void>;
}
