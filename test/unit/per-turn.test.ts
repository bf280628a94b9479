import test from 'ava';
import { readsPerTurn } from '../../core/per-turn.ts';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

function recordingStore(values: Record<string, number>) {
  const queries: string[][] = [];
  let failNext = false;
  const read = readsPerTurn<string, number>(async (keys) => {
    queries.push(keys);
    if (failNext) {
      failNext = false;
      throw new Error('server gone');
    }
    return new Map(keys.filter((k) => k in values).map((k): [string, number] => [k, values[k]!]));
  }, 4);
  return { read, queries, failOnce: () => (failNext = true) };
}

test('the reads of one turn go out as one query, each key once; each caller gets its own answer', async (t) => {
  const { read, queries } = recordingStore({ a: 1, b: 2 });
  const answers = await Promise.all([read('a'), read('b'), read('a'), read('missing')]);
  t.deepEqual(answers, [1, 2, 1, undefined]);
  t.deepEqual(queries, [['a', 'b', 'missing']]);
});

test('a read is sent only after it was asked for: a write finished before it is seen', async (t) => {
  const values: Record<string, number> = { a: 1 };
  const { read, queries } = recordingStore(values);
  const first = read('a');
  values.a = 2; // a write that finishes after the first read was asked for, before the turn ends
  const second = read('a');
  t.deepEqual(await Promise.all([first, second]), [2, 2], 'both were sent after the write; neither is older than its caller');
  t.is(queries.length, 1);
});

test('reads of the next turn are a new query', async (t) => {
  const { read, queries } = recordingStore({ a: 1, b: 2 });
  const first = read('a');
  await nextTurn();
  const second = read('b');
  t.deepEqual(await Promise.all([first, second]), [1, 2]);
  t.deepEqual(queries, [['a'], ['b']]);
});

test('a full batch leaves at once and the next read opens another', async (t) => {
  const { read, queries } = recordingStore({ a: 1, b: 2, c: 3, d: 4, e: 5 });
  t.deepEqual(await Promise.all(['a', 'b', 'c', 'd', 'e'].map(read)), [1, 2, 3, 4, 5]);
  t.deepEqual(queries, [['a', 'b', 'c', 'd'], ['e']]);
});

test('a failed query fails the reads in it and no others', async (t) => {
  const { read, queries, failOnce } = recordingStore({ a: 1, b: 2 });
  failOnce();
  const failed = await Promise.allSettled([read('a'), read('b')]);
  t.deepEqual(failed.map((r) => r.status), ['rejected', 'rejected']);
  t.is(await read('a'), 1, 'the next turn reads afresh');
  t.is(queries.length, 2);
});
