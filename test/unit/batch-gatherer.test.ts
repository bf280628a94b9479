import test from 'ava';
import { batchGatherer } from '../../core/adapters/bus/batch-gatherer.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('chunks of several partitions that come within maxWaitMs are handled as one batch', async (t) => {
  const batches: number[][] = [];
  const gatherer = batchGatherer<number>({ maxBatch: 100, maxWaitMs: 50, handle: async (m) => (batches.push(m), true) });
  const results = await Promise.all([gatherer.add([1, 2]), gatherer.add([3]), gatherer.add([4, 5, 6])]);
  t.deepEqual(results, [true, true, true]);
  t.deepEqual(batches, [[1, 2, 3, 4, 5, 6]]);
});

test('a batch is handed over as soon as it holds maxBatch messages, without waiting', async (t) => {
  const batches: number[][] = [];
  const gatherer = batchGatherer<number>({ maxBatch: 4, maxWaitMs: 60_000, handle: async (m) => (batches.push(m), true) });
  const started = Date.now();
  await Promise.all([gatherer.add([1, 2]), gatherer.add([3, 4])]);
  t.true(Date.now() - started < 1000);
  t.deepEqual(batches, [[1, 2, 3, 4]]);
});

test('a chunk that would take the batch past maxBatch closes it and opens the next: no batch is larger than maxBatch', async (t) => {
  const batches: number[][] = [];
  const gatherer = batchGatherer<number>({ maxBatch: 5, maxWaitMs: 30, handle: async (m) => (batches.push(m), true) });
  await Promise.all([gatherer.add([1, 2, 3]), gatherer.add([4, 5, 6]), gatherer.add([7])]);
  t.deepEqual(batches, [[1, 2, 3], [4, 5, 6, 7]]);
  t.true(batches.every((b) => b.length <= 5));
});

test('batches are handled one at a time, in the order they closed', async (t) => {
  const log: string[] = [];
  const gatherer = batchGatherer<string>({
    maxBatch: 1, maxWaitMs: 1000,
    handle: async ([m]) => {
      log.push(`start ${m}`);
      await sleep(m === 'a' ? 40 : 1);
      log.push(`end ${m}`);
      return true;
    },
  });
  await Promise.all([gatherer.add(['a']), gatherer.add(['b'])]);
  t.deepEqual(log, ['start a', 'end a', 'start b', 'end b']);
});

test('every chunk of a batch the handler gave up on (the subscriber stopped) learns it was not handled; a thrown handler counts the same', async (t) => {
  let calls = 0;
  const gatherer = batchGatherer<number>({
    maxBatch: 10, maxWaitMs: 10,
    handle: async () => {
      calls++;
      if (calls === 1) return false;
      if (calls === 2) throw new Error('store down');
      return true;
    },
  });
  t.deepEqual(await Promise.all([gatherer.add([1]), gatherer.add([2])]), [false, false]);
  t.deepEqual(await Promise.all([gatherer.add([3])]), [false]);
  // The gatherer keeps working after both.
  t.true(await gatherer.add([4]));
});

test('an empty chunk (every message of it dead-lettered) is handled at once and joins no batch', async (t) => {
  let calls = 0;
  const gatherer = batchGatherer<number>({ maxBatch: 10, maxWaitMs: 60_000, handle: async () => (calls++, true) });
  t.true(await gatherer.add([]));
  t.is(calls, 0);
});

test('catching up: when every delivery in progress waits on the open batch and one left a backlog, it closes without waiting for maxWaitMs', async (t) => {
  const batches: number[][] = [];
  const gatherer = batchGatherer<number>({ maxBatch: 100, maxWaitMs: 60_000, handle: async (m) => (batches.push(m), true) });
  const started = Date.now();
  const results = await Promise.all([
    gatherer.delivery(() => gatherer.add([1, 2], { backlog: true })),
    gatherer.delivery(() => gatherer.add([3], { backlog: false })),
  ]);
  t.deepEqual(results, [true, true]);
  t.deepEqual(batches, [[1, 2, 3]]);
  t.true(Date.now() - started < 1000);
});

test('a trickle (no backlog behind any chunk) still waits maxWaitMs to fill, so that a slow stream is written in few large batches', async (t) => {
  const batches: number[][] = [];
  const gatherer = batchGatherer<number>({ maxBatch: 100, maxWaitMs: 80, handle: async (m) => (batches.push(m), true) });
  const started = Date.now();
  await Promise.all([gatherer.delivery(() => gatherer.add([1], { backlog: false })), gatherer.delivery(() => gatherer.add([2]))]);
  t.true(Date.now() - started >= 70);
  t.deepEqual(batches, [[1, 2]]);
});

test('with a backlog, a batch waits while another delivery in progress may still add to it, and closes once that delivery returns', async (t) => {
  const batches: number[][] = [];
  const gatherer = batchGatherer<number>({ maxBatch: 100, maxWaitMs: 60_000, handle: async (m) => (batches.push(m), true) });
  let release!: () => void;
  const other = gatherer.delivery(() => new Promise<void>((resolve) => { release = resolve; }));
  const waiting = gatherer.delivery(() => gatherer.add([1], { backlog: true }));
  await new Promise((resolve) => setTimeout(resolve, 30));
  t.deepEqual(batches, [], 'the other delivery could still join');
  release();
  await other;
  t.true(await waiting);
  t.deepEqual(batches, [[1]]);
});
