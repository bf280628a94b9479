import { hash } from 'node:crypto';
import type { IdempotencyStore } from '../ports/counters.ts';
import type { SubmissionKey } from '../ports/jobs.ts';
import { ApiError } from '../errors.ts';
import { UNREACHABLE_RETRY_SECONDS } from '../unreachable.ts';

/**
 * `Idempotency-Key` (SPEC: POST /tts): 8 to 128 printable ASCII characters
 * without whitespace, scoped to the API key, kept 24 hours. A replay returns
 * the original response with `Idempotent-Replayed: true` and charges nothing.
 */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;
const VALID_KEY = /^[\x21-\x7E]{8,128}$/;

export interface StoredResponse {
  status: number;
  body: unknown;
}

/** Objects with their members in code-unit order, so that the same body in another member order is the same request. */
const membersSorted = (_key: string, value: unknown): unknown =>
  value !== null && typeof value === 'object' && !Array.isArray(value)
    ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    : value;

export function fingerprint(body: unknown): string {
  return hash('sha256', JSON.stringify(body ?? null, membersSorted));
}

/**
 * The fingerprint before member order stopped counting: keys claimed by the
 * previous release are kept 24 hours, and a retry of the same bytes under
 * one of them must still be a replay, not 422. Drop a day after release.
 */
function fingerprintAsSent(body: unknown): string {
  return hash('sha256', JSON.stringify(body ?? null));
}

export type IdempotentResult = { replayed: boolean; response: StoredResponse };

/**
 * What the work of a keyed request is handed: the key (scoped to the API
 * key), the body's fingerprint, and since when a claim of the key is still
 * kept. The work records it with what it accepts, in the same write
 * (core/ports/jobs.ts `SubmissionKey`), so that the system of record knows
 * which request got through under the key even when the counters store
 * does not: its record lost (an embedded process restarted, a Redis that
 * lost data), or left in flight by a process that died before saving it.
 */
export type IdempotencyClaim = SubmissionKey;

/** Thrown by a keyed work whose write found the key held by another request: nothing was charged. */
export class IdempotencyKeyTaken extends Error {
  constructor() {
    super('another request holds this Idempotency-Key');
    this.name = 'IdempotencyKeyTaken';
  }
}

/** The answer of the request that got through under a key, from the system of record; `pending` while its outcome is unknown. */
export type HeldAnswer = { fingerprint: string; response: StoredResponse } | 'pending' | null;

/**
 * A request whose key is still marked in flight after this long, with no
 * accepted work holding the key, died before it accepted anything (an
 * accept gives up on a locked store after 60 s): a retry runs in its place.
 * Should the first still land, the write's claim refuses one of the two.
 */
export const IN_FLIGHT_STALE_SECONDS = 120;

export interface IdempotentOptions {
  /** looks the key up in the system of record (`acceptedWithKey`) */
  heldAnswer?: (claim: IdempotencyClaim) => Promise<HeldAnswer>;
  /** a finished request whose answer could not be recorded */
  onStoreError?: (err: unknown) => void;
  /**
   * The recorded answer as it is replayed: a route whose answer holds
   * something that ages (a signed link and its `expiresIn`) renews it here,
   * as the answer rebuilt from the system of record already is.
   */
  replay?: (recorded: StoredResponse) => Promise<StoredResponse>;
  now?: () => number;
}

function inFlight(): ApiError {
  return new ApiError(409, 'A request with this Idempotency-Key is still being processed. Retry in 1 second with the same key.', { code: 'IDEMPOTENCY_IN_FLIGHT', retryAfterSeconds: 1 });
}

function reused(): ApiError {
  return new ApiError(422, 'This Idempotency-Key was already used with a different request body. Use a new key for a new request.', { code: 'IDEMPOTENCY_KEY_REUSED' });
}

export async function runIdempotent(
  store: IdempotencyStore,
  scope: string,
  key: string | undefined,
  body: unknown,
  work: (claim: IdempotencyClaim | null) => Promise<StoredResponse>,
  options: IdempotentOptions = {},
): Promise<IdempotentResult> {
  if (key === undefined) return { replayed: false, response: await work(null) };
  if (!VALID_KEY.test(key)) {
    throw new ApiError(400, 'Idempotency-Key must be 8 to 128 printable ASCII characters without whitespace.', { code: 'IDEMPOTENCY_KEY_INVALID', param: 'Idempotency-Key' });
  }
  const now = options.now?.() ?? Date.now();
  const storeKey = `idem:${scope}:${key}`;
  const print = fingerprint(body);
  let asSent: string | undefined;
  const sameBody = (stored: string) => stored === print || stored === (asSent ??= fingerprintAsSent(body));
  const claim: IdempotencyClaim = { key: `${scope}:${key}`, fingerprint: print, keptSince: new Date(now - IDEMPOTENCY_TTL_SECONDS * 1000).toISOString() };
  const record = (response: StoredResponse) => store
    .complete(storeKey, { state: 'done', fingerprint: print, status: response.status, body: response.body }, IDEMPOTENCY_TTL_SECONDS)
    .catch((err: unknown) => options.onStoreError?.(err));

  /** The answer of the request that got through under the key, recorded for the next replay; `pending` while unknown, null when none. */
  async function held(): Promise<IdempotentResult | 'pending' | null> {
    const found = (await options.heldAnswer?.(claim)) ?? null;
    if (found === null || found === 'pending') return found;
    if (!sameBody(found.fingerprint)) throw reused();
    await record(found.response);
    return { replayed: true, response: found.response };
  }

  let existing: Awaited<ReturnType<IdempotencyStore['begin']>>;
  try {
    existing = await store.begin(storeKey, print, IDEMPOTENCY_TTL_SECONDS);
  } catch {
    // No process can tell alone whether the key was used (another may have run it): refuse rather than risk a second charge.
    throw new ApiError(503, 'The Idempotency-Key cannot be checked right now. Nothing was charged; retry in a few seconds with the same key.', {
      code: 'IDEMPOTENCY_UNAVAILABLE', retryAfterSeconds: UNREACHABLE_RETRY_SECONDS,
    });
  }
  if (existing) {
    if (!sameBody(existing.fingerprint)) throw reused();
    if (existing.state === 'done') {
      const recorded = { status: existing.status, body: existing.body };
      return { replayed: true, response: options.replay ? await options.replay(recorded) : recorded };
    }
    // In flight: finished after all (its answer never recorded), still running, or died before accepting anything.
    const answer = await held();
    // A mark without its start (written by an older version, whose accepts claim no key) is never taken over.
    const abandoned = existing.startedAt !== undefined && now - existing.startedAt >= IN_FLIGHT_STALE_SECONDS * 1000;
    if (answer === 'pending' || (answer === null && !abandoned)) throw inFlight();
    if (answer !== null) return answer;
  }
  let response: StoredResponse;
  try {
    response = await work(claim);
  } catch (err) {
    if (err instanceof IdempotencyKeyTaken) {
      // Another request got through under the key (its record lost, or it ran beside a retry that took over).
      // This request's own reservation must not outlive it unless it records that request's answer.
      const release = () => store.abandon(storeKey).catch(() => undefined);
      const answer = await held().catch(async (refusal: unknown) => {
        await release();
        throw refusal;
      });
      if (answer !== null && answer !== 'pending') return answer;
      await release();
      throw inFlight();
    }
    // A refused request charged nothing, so the client may fix it and retry with the same key.
    await store.abandon(storeKey).catch(() => undefined);
    throw err;
  }
  // The work is done (and paid for): a store that fails now must not turn it into an error. A retry then
  // finds the key in flight, and the answer from the system of record.
  await record(response);
  return { replayed: false, response };
}
