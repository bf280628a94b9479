import { hash } from 'node:crypto';
import type { IdempotencyStore } from '../ports/counters.ts';
import { ApiError } from '../errors.ts';
import { UNREACHABLE_RETRY_SECONDS } from './unreachable.ts';

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

export function fingerprint(body: unknown): string {
  return hash('sha256', JSON.stringify(body ?? null));
}

export type IdempotentResult = { replayed: boolean; response: StoredResponse };

export async function runIdempotent(
  store: IdempotencyStore,
  scope: string,
  key: string | undefined,
  body: unknown,
  work: () => Promise<StoredResponse>,
  onStoreError?: (err: unknown) => void,
): Promise<IdempotentResult> {
  if (key === undefined) return { replayed: false, response: await work() };
  if (!VALID_KEY.test(key)) {
    throw new ApiError(400, 'Idempotency-Key must be 8 to 128 printable ASCII characters without whitespace.', { code: 'IDEMPOTENCY_KEY_INVALID', param: 'Idempotency-Key' });
  }
  const storeKey = `idem:${scope}:${key}`;
  const print = fingerprint(body);
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
    if (existing.fingerprint !== print) {
      throw new ApiError(422, 'This Idempotency-Key was already used with a different request body. Use a new key for a new request.', { code: 'IDEMPOTENCY_KEY_REUSED' });
    }
    if (existing.state === 'in_flight') {
      throw new ApiError(409, 'A request with this Idempotency-Key is still being processed. Retry in 1 second with the same key.', { code: 'IDEMPOTENCY_IN_FLIGHT', retryAfterSeconds: 1 });
    }
    return { replayed: true, response: { status: existing.status, body: existing.body } };
  }
  let response: StoredResponse;
  try {
    response = await work();
  } catch (err) {
    // A refused request charged nothing, so the client may fix it and retry with the same key.
    await store.abandon(storeKey).catch(() => undefined);
    throw err;
  }
  // The work is done (and paid for): a store that fails now must not turn it into an error. The key then
  // stays marked in flight, and a retry with it is refused (409) rather than run twice.
  await store.complete(storeKey, { state: 'done', fingerprint: print, status: response.status, body: response.body }, IDEMPOTENCY_TTL_SECONDS)
    .catch((err: unknown) => onStoreError?.(err));
  return { replayed: false, response };
}
