import test from 'ava';
import { openMemoryDb } from '../../core/adapters/embedded-db.ts';
import { holdsPrunePoint, openMessageLog, partitionOf } from '../../core/adapters/bus/local-log.ts';

test('holdsPrunePoint: an append prunes when it takes a sequence number that is a positive multiple of 256, as one-at-a-time appends did', (t) => {
  for (let first = 0; first < 600; first++) {
    for (const n of [1, 2, 3, 255, 256, 257, 600]) {
      let expected = false;
      for (let seq = first; seq < first + n; seq++) if (seq % 256 === 0 && seq > 0) expected = true;
      if (holdsPrunePoint(first, first + n) !== expected) return t.fail(`first ${first}, n ${n}`);
    }
  }
  t.pass();
});

test('an append reserves consecutive sequence numbers per partition, in publication order, across appends', (t) => {
  const log = openMessageLog(openMemoryDb(), 3, 10_000);
  const keys = ['a', 'b', 'c', 'd', 'e', 'f'];
  const batch = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ id: `m${from + i}`, key: keys[(from + i) % keys.length]!, value: from + i }));
  log.append('t', batch(0, 10));
  log.append('t', batch(10, 7));
  log.append('t', batch(17, 1));
  const seen: number[] = [];
  for (let part = 0; part < 3; part++) {
    const stored = log.fetch('t', part, 0, 100);
    t.deepEqual(stored.map((m) => m.seq), stored.map((_, i) => i), `partition ${part}: 0..n-1 without gaps`);
    const values = stored.map((m) => JSON.parse(m.value) as number);
    t.deepEqual(values, [...values].sort((x, y) => x - y), `partition ${part}: publication order`);
    for (const m of stored) t.is(partitionOf(m.key, 3), part);
    seen.push(...values);
  }
  t.deepEqual(seen.sort((x, y) => x - y), Array.from({ length: 18 }, (_, i) => i));
});

test('what every group has committed is pruned once an append crosses a multiple of 256', (t) => {
  const log = openMessageLog(openMemoryDb(), 1, 10_000);
  log.join('g', 't');
  log.append('t', Array.from({ length: 200 }, (_, i) => ({ id: `m${i}`, key: 'k', value: i })));
  log.commit('g', 't', 0, 150);
  t.is(log.fetch('t', 0, 0, 1000).length, 200, 'nothing pruned before a multiple of 256 is reached');
  log.append('t', Array.from({ length: 100 }, (_, i) => ({ id: `n${i}`, key: 'k', value: i })));
  const left = log.fetch('t', 0, 0, 1000);
  t.is(left[0]!.seq, 150, 'the committed 150 are gone');
  t.is(left.length, 150);
});
