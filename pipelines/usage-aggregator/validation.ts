import type { JobCloseEvent, OutcomeEvent } from '../../core/ports/analytics.ts';
import { isoTimeMs } from '../../core/iso-time.ts';

/**
 * Checks an event before it joins a batch. The analytics store refuses a
 * whole batch over one bad value, and a batch is retried until it succeeds,
 * so one malformed event would stall every event behind it: bad ones are
 * set aside (dead-lettered) instead.
 */
const RESULTS = new Set(['ok', 'queued', 'cache_hit', 'denied', 'error']);

const isCount = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isAmount = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0;
const isText = (v: unknown) => typeof v === 'string' && v.length > 0;
const isOptionalText = (v: unknown) => v === null || typeof v === 'string';
const isInstant = (v: unknown) => typeof v === 'string' && Number.isFinite(isoTimeMs(v));

export function outcomeProblem(e: OutcomeEvent): string | null {
  if (!e || typeof e !== 'object') return 'not an object';
  if (!isText(e.id)) return 'id missing';
  if (!isInstant(e.at)) return 'at is not a date';
  if (!isText(e.route)) return 'route missing';
  if (!Number.isInteger(e.status) || e.status < 100 || e.status > 599) return 'status is not an HTTP status';
  if (!RESULTS.has(e.result)) return 'result unknown';
  for (const field of ['tokensCharged', 'tokensRefunded', 'characters'] as const) if (!isCount(e[field])) return `${field} is not a count`;
  if (!isAmount(e.audioSeconds)) return 'audioSeconds is not an amount';
  if (e.genMs !== null && !isAmount(e.genMs)) return 'genMs is not an amount';
  for (const field of ['accountId', 'keyId', 'grantId', 'voice', 'voiceName', 'engine', 'errorCode', 'jobId'] as const) {
    if (!isOptionalText(e[field])) return `${field} is not text`;
  }
  return null;
}

export function jobCloseProblem(e: JobCloseEvent): string | null {
  if (!isText(e.id) || !isText(e.jobId)) return 'id missing';
  if (!isInstant(e.at)) return 'at is not a date';
  if (e.result !== 'ok' && e.result !== 'error') return 'result unknown';
  if (!isAmount(e.audioSeconds) || !isCount(e.tokensRefunded)) return 'amounts out of range';
  if (e.genMs !== null && !isAmount(e.genMs)) return 'genMs is not an amount';
  return null;
}
