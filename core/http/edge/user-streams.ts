import type { SlotPool } from '../../ports/counters.ts';
import { concurrencyRefusal } from '../rate-limit.ts';

/**
 * SPEC Limits: at most 2 (STREAMS_PER_USER) open streams per signed-in
 * person, besides the 4 per grant the speech plugin counts. Core applies it
 * on routes marked `stream` when the caller's credential stands for a person
 * (AuthContext.userId: OAuth access tokens and console sessions); a feature that starts streams some other way for a
 * signed-in user calls `holdUserStream` itself and releases when it ends.
 */

/** Outlives its stream only when a process dies; as long as the longest stream. */
const SLOT_TTL_SECONDS = 4 * 3600;

export interface HeldStream {
  /** idempotent */
  release(): Promise<void>;
}

export async function holdUserStream(slots: SlotPool, userId: string, max: number): Promise<HeldStream> {
  const pool = `streams:user:${userId}`;
  const held = await slots.acquire(pool, max, SLOT_TTL_SECONDS);
  if (!held.ok || !held.slotId) {
    throw concurrencyRefusal(`At most ${max} streams can be open at once per signed-in user. Close one and retry; nothing was charged.`, 'STREAM_CONCURRENCY', max);
  }
  let released: Promise<void> | null = null;
  return {
    release() {
      released ??= slots.release(pool, held.slotId!);
      return released;
    },
  };
}
