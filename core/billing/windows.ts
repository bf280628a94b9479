/**
 * Daily and weekly cap windows. Windows are computed in a fixed offset from
 * UTC (default +07:00, Vietnam, which has no daylight saving); a day starts at
 * 00:00 local time and a week on Monday 00:00 local time.
 */
export interface CapWindows {
  dayKey: string;
  weekKey: string;
  /** ISO instants when the current windows roll over */
  dayResetAt: string;
  weekResetAt: string;
}

const DAY_MS = 86_400_000;

// Windows change once a day: the last answer is kept, since every charge and balance call asks.
let last: { offset: number; dayStartLocal: number; windows: CapWindows } | null = null;

export function capWindows(now: Date, offsetMinutes: number): CapWindows {
  const localMs = now.getTime() + offsetMinutes * 60_000;
  const dayStart = Math.floor(localMs / DAY_MS) * DAY_MS;
  if (last && last.offset === offsetMinutes && last.dayStartLocal === dayStart) return last.windows;
  const windows = computeWindows(localMs, offsetMinutes);
  last = { offset: offsetMinutes, dayStartLocal: dayStart, windows: Object.freeze(windows) };
  return windows;
}

function computeWindows(localMs: number, offsetMinutes: number): CapWindows {
  const local = new Date(localMs);
  const dayStartLocal = Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate());
  const weekday = (local.getUTCDay() + 6) % 7; // Monday = 0
  const weekStartLocal = dayStartLocal - weekday * DAY_MS;
  const toInstant = (localMs: number) => new Date(localMs - offsetMinutes * 60_000).toISOString();
  return {
    dayKey: new Date(dayStartLocal).toISOString().slice(0, 10),
    weekKey: 'W' + new Date(weekStartLocal).toISOString().slice(0, 10),
    dayResetAt: toInstant(dayStartLocal + DAY_MS),
    weekResetAt: toInstant(weekStartLocal + 7 * DAY_MS),
  };
}
