import { createHash, randomUUID } from 'node:crypto';
import type { Redis, RedisOptions } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import type { Counters, IdempotencyRecord, IdempotencyStore, SlotPool } from '../../ports/counters.ts';
import { createCachedRateLimiter } from './rate-limits.ts';
import { createMemorySlots } from './memory.ts';
import type { Logger } from '../../logger.ts';

/**
 * Production counters on Redis (ioredis + rate-limiter-flexible), shared by
 * every API process. Read-check-write sequences run as Lua scripts so each is
 * one atomic step on the server; slot expiry uses the server clock, so API
 * hosts with skewed clocks still agree on which slots are stale.
 * The adapter owns the client it is given: close() quits it.
 */

// Reserve when absent, otherwise hand back what is there, in one round trip.
const BEGIN_LUA = `
if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return false end
return redis.call('GET', KEYS[1])`;

// Only a reservation may be dropped: a completed reply must survive for retries.
const ABANDON_LUA = `
local v = redis.call('GET', KEYS[1])
if v and cjson.decode(v).state == 'in_flight' then return redis.call('DEL', KEYS[1]) end
return 0`;

const NOW_MS_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

// Slots are members scored by their expiry time; stale ones are removed before counting.
const ACQUIRE_LUA = `${NOW_MS_LUA}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local n = redis.call('ZCARD', KEYS[1])
if n >= tonumber(ARGV[1]) then return {0, n} end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return {1, n + 1}`;

const IN_USE_LUA = `${NOW_MS_LUA}
return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')`;

type Script = (keys: string[], args: Array<string | number>) => Promise<unknown>;

/** EVALSHA with a fallback to EVAL the first time a server has not seen the script. */
function script(redis: Redis, lua: string): Script {
  const sha = createHash('sha1').update(lua).digest('hex');
  return async (keys, args) => {
    try {
      return await redis.evalsha(sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return redis.eval(lua, keys.length, ...keys, ...args);
    }
  };
}

function ttlMs(ttlSeconds: number): number {
  if (!(ttlSeconds > 0) || !Number.isFinite(ttlSeconds)) throw new TypeError(`ttl must be positive, got ${ttlSeconds}`);
  return Math.ceil(ttlSeconds * 1000);
}

/**
 * How the platform's Redis client is made (runtime.ts, and the contract suite
 * with the same options). Auto-pipelining sends the commands of one
 * event-loop turn in one write: every request consumes its rate limits, and
 * one write per turn instead of one per command took `GET /balance` with
 * Redis from about 10,100 to 12,600 req/s on a 6-second autocannon loop.
 */
export const REDIS_CLIENT_OPTIONS: RedisOptions = {
  maxRetriesPerRequest: 2, enableOfflineQueue: true, enableAutoPipelining: true,
  // A command that gets no answer (the server went away under it, a half-open connection) fails after this
  // instead of waiting on ioredis' reconnects: up to 15 s a command, and every request waits on a few.
  commandTimeout: 1000,
};

/** What a counters operation throws at once while Redis cannot be reached (the callers fall back on any failure). */
class CountersUnavailableError extends Error {
  constructor() {
    super('the counters store (Redis) cannot be reached');
    this.name = 'CountersUnavailableError';
  }
}

/**
 * Fails at once while a client that was connected has lost its connection,
 * instead of queueing the command until ioredis reconnects (each waited up
 * to 15 s, so a Redis outage stalled every request). Before the first
 * connection commands still queue, bounded by commandTimeout: the process
 * may start a moment before Redis answers.
 */
function availability(redis: Redis): () => void {
  let connected = redis.status === 'ready';
  redis.on('ready', () => { connected = true; });
  return () => {
    if (connected && redis.status !== 'ready') throw new CountersUnavailableError();
  };
}

/** How often the watchdog asks a connected Redis whether it still answers. */
const HUNG_CHECK_EVERY_MS = 1000;

/**
 * A Redis that keeps its connection but stops answering (a paused process,
 * a network partition without a reset) never makes the client lose the
 * connection, so `availability` never engaged: every command waited out its
 * 1-second timeout, several per request, for as long as it lasted (1 to 8 s
 * a request). A PING that times out resets the connection instead; ioredis
 * reconnects (ready again once Redis answers), and meanwhile every counters
 * operation fails at once to its in-process fallback. Returns the stop.
 */
export function watchForHungConnection(redis: Redis, logger?: Pick<Logger, 'warn'>, everyMs = HUNG_CHECK_EVERY_MS): () => void {
  let asking = false;
  const timer = setInterval(() => {
    if (asking || redis.status !== 'ready') return;
    asking = true;
    redis.ping().then(() => undefined, (err: unknown) => {
      if (redis.status !== 'ready' || !/timed out/i.test((err as Error).message)) return;
      logger?.warn('Redis stopped answering on an open connection; dropping it and reconnecting', { err: err as Error });
      // Destroyed, not ended: a server that does not answer never completes a graceful close, and the client stayed
      // "ready" on the half-closed socket. ioredis reconnects, and is ready again once Redis answers its ready check.
      redis.stream.destroy();
    }).finally(() => { asking = false; });
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** At most one warning per this many ms while Redis cannot be reached. */
const ERROR_REPORT_EVERY_MS = 10_000;

/**
 * Connection errors as structured warnings. ioredis reconnects by itself, but
 * a client with no 'error' listener prints "[ioredis] Unhandled error event"
 * to stderr on every attempt: a Redis outage flooded the log with unstructured
 * lines. Here: one warning when it starts, then one every 10 s with the count,
 * and one line when the connection is back.
 */
export function reportRedisErrors(redis: Redis, logger: Pick<Logger, 'warn' | 'info'>, everyMs = ERROR_REPORT_EVERY_MS): void {
  let failing = false;
  let unreported = 0;
  let lastReport = 0;
  redis.on('error', (err: Error) => {
    unreported++;
    const now = Date.now();
    if (failing && now - lastReport < everyMs) return;
    logger.warn(failing ? 'Redis still unreachable; reconnecting' : 'Redis unreachable; reconnecting', { errors: unreported, err });
    failing = true;
    unreported = 0;
    lastReport = now;
  });
  redis.on('ready', () => {
    if (!failing) return;
    failing = false;
    unreported = 0;
    logger.info('Redis reachable again');
  });
}

/**
 * While Redis cannot be reached nothing waits on it: rate limits (the
 * per-key limits and the edge's requests a minute) are counted by this
 * process in memory (rate-limiter-flexible's insurance limiter), stream and
 * speech slots likewise (insuredSlots), and an Idempotency-Key, which no
 * process can check alone, is refused with 503 (core/http/idempotency.ts).
 * Each goes back to Redis as soon as it answers.
 */
export function createRedisCounters(redis: Redis, prefix = 'counters:', logger?: Pick<Logger, 'warn'>): Counters {
  const ready = availability(redis);
  const stopWatching = watchForHungConnection(redis, logger);
  return {
    rateLimiter: createCachedRateLimiter((opts) => new RateLimiterRedis({
      ...opts, storeClient: redis, keyPrefix: `${prefix}${opts.keyPrefix}`,
      rejectIfRedisNotReady: true, insuranceLimiter: new RateLimiterMemory({ points: opts.points, duration: opts.duration, blockDuration: opts.blockDuration }),
    })),
    idempotency: createRedisIdempotency(redis, `${prefix}idem:`, ready),
    slots: insuredSlots(createRedisSlots(redis, `${prefix}slots:`, ready), createMemorySlots(), logger),
    async ping() {
      await redis.ping();
    },
    async close() {
      stopWatching();
      // QUIT needs an answer: sent while Redis is out of reach it left the client reconnecting for good (a
      // shutdown that never let the process go, a test worker that never exited). Without a connection, drop it.
      if (redis.status === 'ready') await redis.quit();
      else redis.disconnect();
    },
  };
}

function createRedisIdempotency(redis: Redis, prefix: string, ready: () => void): IdempotencyStore {
  const begin = script(redis, BEGIN_LUA);
  const abandon = script(redis, ABANDON_LUA);
  return {
    async begin(key, fingerprint, ttlSeconds) {
      ready();
      const record: IdempotencyRecord = { state: 'in_flight', fingerprint, startedAt: Date.now() };
      const existing = await begin([prefix + key], [JSON.stringify(record), ttlMs(ttlSeconds)]);
      return typeof existing === 'string' ? (JSON.parse(existing) as IdempotencyRecord) : null;
    },
    async complete(key, record, ttlSeconds) {
      ready();
      await redis.set(prefix + key, JSON.stringify(record), 'PX', ttlMs(ttlSeconds));
    },
    async abandon(key) {
      ready();
      await abandon([prefix + key], []);
    },
  };
}

function createRedisSlots(redis: Redis, prefix: string, ready: () => void): SlotPool {
  const acquire = script(redis, ACQUIRE_LUA);
  const inUse = script(redis, IN_USE_LUA);
  // Releases that failed while Redis was away, done once it is back: otherwise each would hold its place until its ttl (hours).
  const unreleased = new Map<string, string>();
  redis.on('ready', () => {
    for (const [slotId, key] of [...unreleased]) {
      unreleased.delete(slotId);
      redis.zrem(key, slotId).catch(() => unreleased.set(slotId, key));
    }
  });
  return {
    async acquire(key, max, ttlSeconds) {
      ready();
      const slotId = randomUUID();
      const [ok, count] = (await acquire([prefix + key], [max, ttlMs(ttlSeconds), slotId])) as [number, number];
      return ok === 1 ? { ok: true, slotId, inUse: count } : { ok: false, slotId: null, inUse: count };
    },
    async release(key, slotId) {
      try {
        ready();
        await redis.zrem(prefix + key, slotId);
      } catch (err) {
        unreleased.set(slotId, prefix + key);
        throw err;
      }
    },
    async inUse(key) {
      ready();
      return Number(await inUse([prefix + key], []));
    },
  };
}

/** Slots taken from the insurance pool carry this prefix, so that their release goes back to it. */
const INSURED = 'mem:';

/**
 * Slots that keep working while Redis does not answer: a slot is then taken
 * from this process's own pool (the limit counted per process, as the
 * insurance rate limiter counts), and released there. A Redis slot whose
 * release fails meanwhile is released once Redis is back.
 */
export function insuredSlots(primary: SlotPool, insurance: SlotPool, logger?: Pick<Logger, 'warn'>): SlotPool {
  let lastWarning = 0;
  const warn = (what: string, err: unknown) => {
    if (Date.now() - lastWarning < ERROR_REPORT_EVERY_MS) return;
    lastWarning = Date.now();
    logger?.warn(`stream and speech slots ${what} in this process: the counters store did not answer`, { err: err as Error });
  };
  return {
    async acquire(key, max, ttlSeconds) {
      try {
        return await primary.acquire(key, max, ttlSeconds);
      } catch (err) {
        warn('counted', err);
        const held = await insurance.acquire(key, max, ttlSeconds);
        return { ...held, slotId: held.slotId === null ? null : INSURED + held.slotId };
      }
    },
    async release(key, slotId) {
      if (slotId.startsWith(INSURED)) return insurance.release(key, slotId.slice(INSURED.length));
      await primary.release(key, slotId).catch((err: unknown) => warn('released later', err));
    },
    async inUse(key) {
      return primary.inUse(key).catch(() => insurance.inUse(key));
    },
  };
}
