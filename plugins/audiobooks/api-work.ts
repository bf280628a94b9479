import type { JobsStore } from '../../core/ports/jobs.ts';
import type { SlotPool } from '../../core/ports/counters.ts';

/**
 * The speech plugin's service-wide pool of open `POST /tts/stream` streams
 * (plugins/speech/slots.ts). Shared by name through the counters port, since
 * plugins never import each other.
 */
export const STREAM_SLOTS_POOL = 'streams:service';

/**
 * "API work waiting", the condition that holds book rendering back
 * (`gpu_busy`): at least one `POST /tts` job queued or rendering, or at least
 * one `POST /tts/stream` stream open. Counted through the jobs store (every
 * process sees the same queue) and the counters port (shared by the fleet on
 * Redis; per process on the embedded in-memory counters).
 */
export interface ApiWorkProbe {
  waiting(): Promise<boolean>;
}

export function apiWorkProbe(jobs: JobsStore, slots: SlotPool): ApiWorkProbe {
  return {
    async waiting() {
      if ((await jobs.countActive()) > 0) return true;
      return (await slots.inUse(STREAM_SLOTS_POOL)) > 0;
    },
  };
}
