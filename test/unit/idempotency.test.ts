import test from 'ava';
import { createHash } from 'node:crypto';
import { createMemoryCounters } from '../../core/adapters/counters/memory.ts';
import {
  fingerprint, IDEMPOTENCY_TTL_SECONDS, IdempotencyKeyTaken, IN_FLIGHT_STALE_SECONDS, runIdempotent,
  type HeldAnswer, type IdempotencyClaim, type StoredResponse,
} from '../../core/http/idempotency.ts';
import { ApiError } from '../../core/errors.ts';

/**
 * SPEC (POST /tts): a replay with the same Idempotency-Key returns the
 * original job and charges nothing. These rules hold when the counters
 * store's record and the system of record disagree: the record lost, or
 * left in flight by a request that died.
 */

const BODY = { text: 'Xin chào' };
const ACCEPTED: StoredResponse = { status: 201, body: { jobId: 'job_1', status: 'queued' } };
const T0 = Date.parse('2026-11-27T12:00:00.000Z');

function harness() {
  const store = createMemoryCounters().idempotency;
  const runs: Array<IdempotencyClaim | null> = [];
  const work = async (claim: IdempotencyClaim | null) => {
    runs.push(claim);
    return ACCEPTED;
  };
  return { store, runs, work };
}

const held = (answer: HeldAnswer) => async () => answer;

async function apiError(promise: Promise<unknown>): Promise<ApiError> {
  const err = await promise.then(() => null, (e: unknown) => e);
  if (!(err instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(err)}`);
  return err;
}

test('the work is handed the claim: the key scoped to the API key, the body fingerprint and the retention window', async (t) => {
  const { store, runs, work } = harness();
  const result = await runIdempotent(store, 'key_1', 'order-0001', BODY, work, { now: () => T0 });
  t.deepEqual(result, { replayed: false, response: ACCEPTED });
  t.deepEqual(runs, [{ key: 'key_1:order-0001', fingerprint: fingerprint(BODY), keptSince: new Date(T0 - IDEMPOTENCY_TTL_SECONDS * 1000).toISOString() }]);
  t.deepEqual(await runIdempotent(store, 'key_1', undefined, BODY, work), { replayed: false, response: ACCEPTED });
  t.is(runs[1], null, 'no key, no claim');
});

test('a key left in flight whose job was accepted (its answer never recorded) is answered from the job, and recorded', async (t) => {
  const { store, runs, work } = harness();
  await store.begin('idem:key_1:order-0002', fingerprint(BODY), 60);
  const result = await runIdempotent(store, 'key_1', 'order-0002', BODY, work, { heldAnswer: held({ fingerprint: fingerprint(BODY), response: ACCEPTED }) });
  t.deepEqual(result, { replayed: true, response: ACCEPTED });
  t.deepEqual(runs, [], 'nothing ran twice');
  const again = await runIdempotent(store, 'key_1', 'order-0002', BODY, work);
  t.deepEqual(again, { replayed: true, response: ACCEPTED }, 'the next replay comes from the record');
});

test('a key in flight with no job yet is IDEMPOTENCY_IN_FLIGHT while its request may still be running', async (t) => {
  for (const answer of [null, 'pending'] as const) {
    const { store, runs, work } = harness();
    await store.begin('idem:key_1:order-0003', fingerprint(BODY), 60);
    const err = await apiError(runIdempotent(store, 'key_1', 'order-0003', BODY, work, { heldAnswer: held(answer) }));
    t.like(err, { status: 409, code: 'IDEMPOTENCY_IN_FLIGHT' });
    t.deepEqual(runs, []);
  }
});

test(`a key in flight for over ${IN_FLIGHT_STALE_SECONDS} s with no job: its request died before accepting anything, and the retry runs`, async (t) => {
  const { store, runs, work } = harness();
  await store.begin('idem:key_1:order-0004', fingerprint(BODY), 600);
  const now = Date.now();
  const early = await apiError(runIdempotent(store, 'key_1', 'order-0004', BODY, work, { heldAnswer: held(null), now: () => now + (IN_FLIGHT_STALE_SECONDS - 1) * 1000 }));
  t.like(early, { status: 409 });
  const pending = await apiError(runIdempotent(store, 'key_1', 'order-0004', BODY, work, { heldAnswer: held('pending'), now: () => now + (IN_FLIGHT_STALE_SECONDS + 1) * 1000 }));
  t.like(pending, { status: 409 }, 'a submission still being charged is waited for');
  const late = await runIdempotent(store, 'key_1', 'order-0004', BODY, work, { heldAnswer: held(null), now: () => now + (IN_FLIGHT_STALE_SECONDS + 1) * 1000 });
  t.deepEqual(late, { replayed: false, response: ACCEPTED });
  t.is(runs.length, 1);
  t.deepEqual(await runIdempotent(store, 'key_1', 'order-0004', BODY, work), { replayed: true, response: ACCEPTED });
});

test('a key in flight without its start (marked by an older version, whose accepts claim no key) is never taken over', async (t) => {
  const { store, runs, work } = harness();
  const older = { ...store, begin: async () => ({ state: 'in_flight' as const, fingerprint: fingerprint(BODY) }) };
  const err = await apiError(runIdempotent(older, 'key_1', 'order-0011', BODY, work, { heldAnswer: held(null), now: () => Date.now() + 3600_000 }));
  t.like(err, { status: 409, code: 'IDEMPOTENCY_IN_FLIGHT' });
  t.deepEqual(runs, []);
});

test('a work that finds the key taken (the record was lost) answers with the job that holds it, or 409 while it is pending', async (t) => {
  const { store } = harness();
  const taken = async () => {
    throw new IdempotencyKeyTaken();
  };
  const replay = await runIdempotent(store, 'key_1', 'order-0005', BODY, taken, { heldAnswer: held({ fingerprint: fingerprint(BODY), response: ACCEPTED }) });
  t.deepEqual(replay, { replayed: true, response: ACCEPTED });
  t.deepEqual(await store.begin('idem:key_1:order-0005', 'x', 60), { state: 'done', fingerprint: fingerprint(BODY), status: 201, body: ACCEPTED.body });
  const err = await apiError(runIdempotent(store, 'key_1', 'order-0006', BODY, taken, { heldAnswer: held('pending') }));
  t.like(err, { status: 409, code: 'IDEMPOTENCY_IN_FLIGHT' });
  t.is(await store.begin('idem:key_1:order-0006', 'x', 60), null, 'nor while the holder is pending');
});

test('the job holding the key was submitted with another body: IDEMPOTENCY_KEY_REUSED, whichever way it is found', async (t) => {
  const other = { fingerprint: fingerprint({ text: 'khác' }), response: ACCEPTED };
  const { store, work } = harness();
  const taken = async () => {
    throw new IdempotencyKeyTaken();
  };
  t.like(await apiError(runIdempotent(store, 'key_1', 'order-0007', BODY, taken, { heldAnswer: held(other) })), { status: 422, code: 'IDEMPOTENCY_KEY_REUSED' });
  t.is(await store.begin('idem:key_1:order-0007', 'x', 60), null, 'the refused request left no reservation to hold the key against its own body');
  await store.begin('idem:key_1:order-0008', fingerprint(BODY), 60);
  t.like(await apiError(runIdempotent(store, 'key_1', 'order-0008', BODY, work, { heldAnswer: held(other) })), { status: 422, code: 'IDEMPOTENCY_KEY_REUSED' });
});

test('a refused work frees the key for a corrected retry; a record that cannot be saved does not fail a finished request', async (t) => {
  const { store, runs, work } = harness();
  const refused = async () => {
    throw new ApiError(400, 'bad voice', { code: 'VOICE_NOT_FOUND' });
  };
  await t.throwsAsync(runIdempotent(store, 'key_1', 'order-0009', BODY, refused));
  t.deepEqual(await runIdempotent(store, 'key_1', 'order-0009', BODY, work), { replayed: false, response: ACCEPTED });
  t.is(runs.length, 1);
  const failing = { ...store, complete: async () => { throw new Error('store lost'); } };
  const errors: unknown[] = [];
  t.deepEqual(await runIdempotent(failing, 'key_1', 'order-0010', BODY, work, { onStoreError: (e) => errors.push(e) }), { replayed: false, response: ACCEPTED });
  t.is(errors.length, 1);
});

test('the same body with its members in another order (nested ones too) is the same request: a replay, not IDEMPOTENCY_KEY_REUSED', async (t) => {
  const { store, runs, work } = harness();
  const sent = { text: 'Xin chào', voiceId: 'Mai', speed: 1.2, meta: { a: 1, b: [{ y: 2, x: 1 }] } };
  const reordered = { meta: { b: [{ x: 1, y: 2 }], a: 1 }, speed: 1.2, voiceId: 'Mai', text: 'Xin chào' };
  t.is(fingerprint(reordered), fingerprint(sent));
  t.not(fingerprint({ ...sent, speed: 1.3 }), fingerprint(sent));
  t.not(fingerprint({ ...sent, meta: { a: 1, b: [{ x: 2, y: 1 }] } }), fingerprint(sent), 'array order and values still count');
  await runIdempotent(store, 'key_1', 'order-0011', sent, work);
  t.deepEqual(await runIdempotent(store, 'key_1', 'order-0011', reordered, work), { replayed: true, response: ACCEPTED });
  t.is(runs.length, 1);
});

test('a key claimed by the previous release (its fingerprint of the body as sent) still replays the same bytes after the upgrade', async (t) => {
  const { store, runs, work } = harness();
  const sent = { voiceId: 'Mai', text: 'Xin chào' };
  const previous = createHash('sha256').update(JSON.stringify(sent)).digest('hex');
  t.not(previous, fingerprint(sent), 'the members were not in order');
  await store.complete('idem:key_1:order-0012', { state: 'done', fingerprint: previous, status: 201, body: ACCEPTED.body }, 60);
  t.deepEqual(await runIdempotent(store, 'key_1', 'order-0012', sent, work), { replayed: true, response: ACCEPTED });
  t.like(await apiError(runIdempotent(store, 'key_1', 'order-0012', { ...sent, text: 'khác' }, work)), { status: 422, code: 'IDEMPOTENCY_KEY_REUSED' });
  t.is(runs.length, 0);
});
