import { randomUUID } from 'node:crypto';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import type { Counters, IdempotencyRecord, IdempotencyStore, SlotPool } from '../../ports/counters.ts';
import { createCachedRateLimiter } from './rate-limits.ts';

/**
 * Embedded counters: everything in this process's memory. Right for one
 * process (`npm start`); several API processes need the Redis adapter to
 * share limits, idempotency keys and stream slots.
 */
export function createMemoryCounters(): Counters {
  const idempotency = createMemoryIdempotency();
  const slots = createMemorySlots();
  // Expired entries are also dropped on access; the sweep bounds memory for keys never seen again.
  const sweep = setInterval(() => {
    idempotency.sweep();
    slots.sweep();
  }, 60_000);
  sweep.unref();
  return {
    rateLimiter: createCachedRateLimiter((opts) => new RateLimiterMemory(opts)),
    idempotency,
    slots,
    async ping() {},
    async close() {
      clearInterval(sweep);
    },
  };
}

function ttlMs(ttlSeconds: number): number {
  if (!(ttlSeconds > 0) || !Number.isFinite(ttlSeconds)) throw new TypeError(`ttl must be positive, got ${ttlSeconds}`);
  return Math.ceil(ttlSeconds * 1000);
}

/** Records are stored as JSON so callers get copies, as they would from Redis. */
function createMemoryIdempotency(): IdempotencyStore & { sweep(): void } {
  const records = new Map<string, { json: string; expiresAt: number }>();
  const live = (key: string): string | null => {
    const hit = records.get(key);
    if (!hit) return null;
    if (hit.expiresAt <= Date.now()) {
      records.delete(key);
      return null;
    }
    return hit.json;
  };
  return {
    async begin(key, fingerprint, ttlSeconds) {
      const ms = ttlMs(ttlSeconds);
      const existing = live(key);
      if (existing !== null) return JSON.parse(existing) as IdempotencyRecord;
      const record: IdempotencyRecord = { state: 'in_flight', fingerprint, startedAt: Date.now() };
      records.set(key, { json: JSON.stringify(record), expiresAt: Date.now() + ms });
      return null;
    },
    async complete(key, record, ttlSeconds) {
      records.set(key, { json: JSON.stringify(record), expiresAt: Date.now() + ttlMs(ttlSeconds) });
    },
    async abandon(key) {
      const existing = live(key);
      if (existing !== null && (JSON.parse(existing) as IdempotencyRecord).state === 'in_flight') records.delete(key);
    },
    sweep() {
      const now = Date.now();
      for (const [key, hit] of records) if (hit.expiresAt <= now) records.delete(key);
    },
  };
}

export function createMemorySlots(): SlotPool & { sweep(): void } {
  const pools = new Map<string, Map<string, number>>();
  const livePool = (key: string): Map<string, number> | undefined => {
    const pool = pools.get(key);
    if (!pool) return undefined;
    const now = Date.now();
    for (const [slotId, expiresAt] of pool) if (expiresAt <= now) pool.delete(slotId);
    if (pool.size === 0) pools.delete(key);
    return pool.size === 0 ? undefined : pool;
  };
  return {
    async acquire(key, max, ttlSeconds) {
      const ms = ttlMs(ttlSeconds);
      const pool = livePool(key) ?? new Map<string, number>();
      if (pool.size >= max) return { ok: false, slotId: null, inUse: pool.size };
      const slotId = randomUUID();
      pool.set(slotId, Date.now() + ms);
      pools.set(key, pool);
      return { ok: true, slotId, inUse: pool.size };
    },
    async release(key, slotId) {
      const pool = pools.get(key);
      pool?.delete(slotId);
      if (pool?.size === 0) pools.delete(key);
    },
    async inUse(key) {
      return livePool(key)?.size ?? 0;
    },
    sweep() {
      for (const key of [...pools.keys()]) livePool(key);
    },
  };
}
