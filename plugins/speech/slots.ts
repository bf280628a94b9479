/**
 * Open-stream limits of `POST /tts/stream` (SPEC Limits): a few streams per
 * grant, shared by every key of that grant, and the service's own streaming
 * capacity. Both are taken before billing, so a refusal moves no money.
 */
import type { SlotPool } from '../../core/ports/counters.ts';
import { ApiError } from '../../core/errors.ts';
import { concurrencyRefusal } from '../../core/http/rate-limit.ts';

/**
 * A slot outlives its stream only when a process dies without releasing it.
 * Streams last as long as their audio (50000 characters at half speed is
 * about two hours), so the safety expiry sits above that.
 */
export const STREAM_SLOT_TTL_SECONDS = 4 * 3600;
export const SERVICE_POOL = 'streams:service';
/** The service's streams are all taken: another frees within seconds at most, as streams end all the time. */
const STREAM_BUSY_RETRY_SECONDS = 5;

export interface StreamLimits {
  streamsPerGrant: number;
  streamCapacity: number;
}

export interface HeldSlots {
  /** idempotent: safe from every exit path */
  release(): Promise<void>;
}

export async function acquireStreamSlots(slots: SlotPool, grantId: string, limits: StreamLimits): Promise<HeldSlots> {
  const grantPool = `streams:grant:${grantId}`;
  const own = await slots.acquire(grantPool, limits.streamsPerGrant, STREAM_SLOT_TTL_SECONDS);
  if (!own.ok || !own.slotId) {
    throw concurrencyRefusal(`At most ${limits.streamsPerGrant} streams can be open at once on this plan (its keys share them). Close one and retry; nothing was charged.`, 'STREAM_CONCURRENCY', limits.streamsPerGrant);
  }
  const service = await slots.acquire(SERVICE_POOL, limits.streamCapacity, STREAM_SLOT_TTL_SECONDS).catch(async (err: unknown) => {
    await slots.release(grantPool, own.slotId!);
    throw err;
  });
  if (!service.ok || !service.slotId) {
    await slots.release(grantPool, own.slotId);
    throw new ApiError(503, `Streaming capacity is used up right now. Retry in ${STREAM_BUSY_RETRY_SECONDS} seconds, or render the text with POST /tts instead; nothing was charged.`, {
      code: 'STREAM_BUSY', extra: { fallback: 'generate' }, retryAfterSeconds: STREAM_BUSY_RETRY_SECONDS,
    });
  }
  let released: Promise<void> | null = null;
  return {
    release() {
      released ??= Promise.all([slots.release(grantPool, own.slotId!), slots.release(SERVICE_POOL, service.slotId!)]).then(() => undefined);
      return released;
    },
  };
}
