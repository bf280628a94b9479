/**
 * SPEC "Delivery semantics": up to 6 attempts at t+0, +0.5, +2.0, +5.5, +13.0
 * and +28.5 minutes. Each retry waits the gap to the next offset after the
 * previous attempt started (0.5, 1.5, 3.5, 7.5, 15.5 minutes), so attempts
 * that start on time land exactly on the offsets and a dispatcher that was
 * down never fires the remaining attempts back to back.
 */
export const ATTEMPT_OFFSETS_MINUTES = [0, 0.5, 2.0, 5.5, 13.0, 28.5] as const;
export const MAX_ATTEMPTS = ATTEMPT_OFFSETS_MINUTES.length;

/** Milliseconds to wait after attempt `attempt` (1-based) failed; null when it was the last. `scale` < 1 shortens it for tests. */
export function retryDelayMs(attempt: number, scale = 1): number | null {
  if (attempt >= MAX_ATTEMPTS) return null;
  const gapMinutes = ATTEMPT_OFFSETS_MINUTES[attempt] - ATTEMPT_OFFSETS_MINUTES[attempt - 1];
  return Math.round(gapMinutes * 60_000 * scale);
}

/** A source of time the dispatcher reads instead of Date.now(), so tests can drive the schedule. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
