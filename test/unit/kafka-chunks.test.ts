import test from 'ava';
import { chunkRecords } from '../../core/adapters/bus/kafka-support.ts';

const record = (key: string, bytes: number) => ({ key, value: 'v'.repeat(bytes) });

test('a publish is cut into runs under the byte budget, in order, keys counted', (t) => {
  const records = Array.from({ length: 10 }, (_, i) => record(`k${i}`, 98)); // 100 bytes each with its key
  const chunks = chunkRecords(records, 300);
  t.deepEqual(chunks.map((c) => c.length), [3, 3, 3, 1]);
  t.deepEqual(chunks.flat(), records);
});

test('a record larger than the budget goes alone (the broker decides), and the ones around it are not held back', (t) => {
  const chunks = chunkRecords([record('a', 10), record('big', 1000), record('b', 10)], 300);
  t.deepEqual(chunks.map((c) => c.map((r) => r.key)), [['a'], ['big'], ['b']]);
});

test('bytes, not characters: Vietnamese text takes two or three bytes a letter', (t) => {
  const chunks = chunkRecords([{ key: 'k', value: 'ệ'.repeat(50) }, { key: 'k', value: 'ệ'.repeat(50) }], 200);
  t.is(chunks.length, 2, '151 bytes each, so two do not fit in 200');
});
