/**
 * How many syntheses `POST /audio/speech` and `POST /agent/speech` run at
 * once: a few per key and per account (slots in the counters port, so a
 * fleet shares them, as stream slots are), and a ceiling for this process
 * (an in-memory semaphore). A request that finds no free slot waits its
 * turn briefly (`queueMs`), then is refused before anything is charged:
 * 429 with X-RateLimit-* headers and Retry-After when its key or account
 * holds too many (SPEC tell-apart rules: an application 429), 503 in the
 * route's JSON envelope when the process is full.
 */
import type { SlotPool } from '../../core/ports/counters.ts';
import { ApiError } from '../../core/errors.ts';
import { CONCURRENCY_RETRY_AFTER_SECONDS, concurrencyRefusal } from '../../core/http/rate-limit.ts';
import { STREAM_SLOT_TTL_SECONDS } from './slots.ts';

export interface SpeechConcurrency {
  perKey: number;
  perAccount: number;
  process: number;
  queueMs: number;
}

export interface SpeechPass {
  /** idempotent: safe from every exit path */
  release(): Promise<void>;
}

/** How often a waiting request looks for a freed key or account slot. */
const POLL_MS = 25;
const RETRY_AFTER_SECONDS = 1;

/** A counting semaphore whose waiters are served in arrival order and give up at a deadline. */
export class Semaphore {
  private used = 0;
  private readonly waiters: Array<{ grant: () => void }> = [];

  constructor(readonly capacity: number) {}

  get inUse(): number {
    return this.used;
  }

  /** Resolves true once a unit is held, false when `waitMs` passed first. */
  acquire(waitMs: number): Promise<boolean> {
    if (this.used < this.capacity && this.waiters.length === 0) {
      this.used++;
      return Promise.resolve(true);
    }
    if (waitMs <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter = {
        grant: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        const at = this.waiters.indexOf(waiter);
        if (at >= 0) this.waiters.splice(at, 1);
        resolve(false);
      }, waitMs);
      this.waiters.push(waiter);
    });
  }

  release(): void {
    const next = this.waiters.shift();
    // The unit passes straight to the next waiter, so it cannot be overtaken.
    if (next) next.grant();
    else this.used = Math.max(0, this.used - 1);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function tooMany(what: string, limit: number): ApiError {
  return concurrencyRefusal(`At most ${limit} speech requests of this ${what} can run at once. Retry after ${CONCURRENCY_RETRY_AFTER_SECONDS} second; nothing was charged.`, 'SPEECH_CONCURRENCY', limit);
}

export function createSpeechGate(slots: SlotPool, limits: SpeechConcurrency) {
  const processSlots = new Semaphore(limits.process);

  /** Takes a slot of `pool`, polling until the deadline; null when none came free. */
  async function slotBy(pool: string, max: number, deadline: number): Promise<string | null> {
    for (;;) {
      const taken = await slots.acquire(pool, max, STREAM_SLOT_TTL_SECONDS);
      if (taken.ok && taken.slotId) return taken.slotId;
      const left = deadline - Date.now();
      if (left <= 0) return null;
      await sleep(Math.min(left, POLL_MS));
    }
  }

  return {
    processSlots,

    /** Waits for a turn of this key, its account and the process; throws the 429 or 503 when none comes in time. */
    async enter(auth: { keyId: string; accountId: string }): Promise<SpeechPass> {
      const deadline = Date.now() + limits.queueMs;
      const keyPool = `speech:key:${auth.keyId}`;
      const accountPool = `speech:account:${auth.accountId}`;
      const keySlot = await slotBy(keyPool, limits.perKey, deadline);
      if (!keySlot) throw tooMany('key', limits.perKey);
      const accountSlot = await slotBy(accountPool, limits.perAccount, deadline).catch(async (err: unknown) => {
        await slots.release(keyPool, keySlot);
        throw err;
      });
      if (!accountSlot) {
        await slots.release(keyPool, keySlot);
        throw tooMany('account', limits.perAccount);
      }
      if (!(await processSlots.acquire(deadline - Date.now()))) {
        await Promise.all([slots.release(keyPool, keySlot), slots.release(accountPool, accountSlot)]);
        throw new ApiError(503, `Speech synthesis is at capacity right now. Retry after ${RETRY_AFTER_SECONDS} second; nothing was charged.`, {
          code: 'SPEECH_BUSY', retryAfterSeconds: RETRY_AFTER_SECONDS,
        });
      }
      let released: Promise<void> | null = null;
      return {
        release() {
          released ??= (async () => {
            processSlots.release();
            await Promise.all([slots.release(keyPool, keySlot), slots.release(accountPool, accountSlot)]);
          })();
          return released;
        },
      };
    },
  };
}

export type SpeechGate = ReturnType<typeof createSpeechGate>;
