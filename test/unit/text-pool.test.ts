import test from 'ava';
import { isMainThread } from 'node:worker_threads';
import { PoolBusyError, WorkerPool } from '../../core/speechkit/worker-pool.ts';
import { OFF_THREAD_MIN_LENGTH, prepareForRequest, speechTextOffLoop } from '../../core/speechkit/text/speech-text-request.ts';
import { speechText } from '../../core/speechkit/text/speech-text.ts';
import { DomainError } from '../../core/errors.ts';
import { toApiError } from '../../core/http/envelopes.ts';

type In = { echo?: string; crash?: boolean; hang?: boolean };
type Out = { echo?: string; thread: string };
const script = new URL('../helpers/pool-worker.ts', import.meta.url);

test('the pool runs tasks in worker threads and answers each with its own result', async (t) => {
  const pool = new WorkerPool<In, Out>({ script, size: 2, maxQueue: 10, taskTimeoutMs: 10_000 });
  t.teardown(() => pool.close());
  const out = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((echo) => pool.run({ echo })));
  t.deepEqual(out.map((o) => o.echo), ['a', 'b', 'c', 'd', 'e']);
  t.true(out.every((o) => o.thread === 'worker'));
  t.true(isMainThread);
  t.is(pool.pending, 0);
});

test('a worker that dies fails only its own task; the pool replaces it and goes on', async (t) => {
  const pool = new WorkerPool<In, Out>({ script, size: 1, maxQueue: 10, taskTimeoutMs: 10_000 });
  t.teardown(() => pool.close());
  const crashed = pool.run({ crash: true });
  const next = pool.run({ echo: 'after' });
  await t.throwsAsync(crashed, { message: /exited with code 3/ });
  t.is((await next).echo, 'after');
});

test('a task past its deadline fails and its worker is replaced', async (t) => {
  const pool = new WorkerPool<In, Out>({ script, size: 1, maxQueue: 10, taskTimeoutMs: 300 });
  t.teardown(() => pool.close());
  await t.throwsAsync(pool.run({ hang: true }), { message: /exceeded 300 ms/ });
  t.is((await pool.run({ echo: 'fresh' })).echo, 'fresh');
});

test('a full queue refuses at once with PoolBusyError', async (t) => {
  const pool = new WorkerPool<In, Out>({ script, size: 1, maxQueue: 1, taskTimeoutMs: 500 });
  t.teardown(() => pool.close());
  await pool.run({ echo: 'warm' }); // the worker is up: the next task runs at once instead of waiting in the queue
  const running = pool.run({ hang: true });
  const waiting = pool.run({ echo: 'queued' });
  await t.throwsAsync(pool.run({ echo: 'refused' }), { instanceOf: PoolBusyError });
  await t.throwsAsync(running);
  t.is((await waiting).echo, 'queued');
});

test('long texts are prepared in the pool with the same result as inline preparation', async (t) => {
  const text = 'Ngày 21/11/2026 giá 50.000đ tăng 3,5% tại TP.HCM [cười]. '.repeat(Math.ceil((OFF_THREAD_MIN_LENGTH * 3) / 56));
  const input = { text, aiRefine: true, moderationTerms: ['ma túy'], sourceCharacters: text.length };
  t.deepEqual(await speechTextOffLoop(input), speechText(input));
});

test('prepareForRequest turns outcomes into the API refusals (422 moderation, 400 expansion, 400 nothing to speak)', async (t) => {
  const base = { aiRefine: true, moderationTerms: ['ma túy'], param: 'text' };
  const refuse = async (text: string) => toApiError(await t.throwsAsync(prepareForRequest({ ...base, text, sourceCharacters: [...text].length }), { instanceOf: DomainError }));
  t.like(await refuse('buôn ma túy '.repeat(200)), { status: 422 });
  t.like(await refuse('1≤'.repeat(800) + '1'), { status: 400, code: 'TEXT_EXPANSION_LIMIT' });
  t.like(await refuse('[music] … \u200B'.repeat(100)), { status: 400, code: 'NOTHING_TO_SPEAK' });
  t.is((await prepareForRequest({ ...base, text: 'Xin chào.', sourceCharacters: 9 })).text, 'Xin chào.');
});
