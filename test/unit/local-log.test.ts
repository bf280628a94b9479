import test from 'ava';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openEmbeddedDb, openMemoryDb } from '../../core/adapters/embedded-db.ts';
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

test('the grouped publishes of one turn are one write: one savepoint, one reservation per partition, publication order kept', async (t) => {
  const ran: string[] = [];
  const db = new Database(':memory:', { verbose: (sql) => ran.push(String(sql)) });
  const log = openMessageLog(db, 2, 10_000);
  log.ensureTopic('t');
  ran.length = 0;
  const sent = Array.from({ length: 12 }, (_, i) => log.appendGrouped('t', [{ id: `m${i}`, key: `k${i % 5}`, value: i }]));
  await Promise.all(sent);
  t.is(ran.filter((sql) => sql.startsWith('SAVEPOINT')).length, 1, 'one savepoint for the twelve');
  t.is(ran.filter((sql) => sql.startsWith('UPDATE bus_partitions')).length, 2, 'one reservation per partition');
  t.is(ran.filter((sql) => sql.startsWith('COMMIT')).length, 1);

  // A publish of the next turn is the next write, after them.
  await log.appendGrouped('t', [{ id: 'late', key: 'k0', value: 12 }]);
  const stored = [0, 1].map((part) => log.fetch('t', part, 0, 100).map((m) => JSON.parse(m.value) as number));
  t.deepEqual(stored.flat().sort((x, y) => x - y), Array.from({ length: 13 }, (_, i) => i));
  for (const values of stored) t.deepEqual(values, [...values].sort((x, y) => x - y), 'publication order within a partition');
});

test('a value that cannot be serialized fails its own publish; the others of its turn are written', async (t) => {
  const log = openMessageLog(openMemoryDb(), 1, 10_000);
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  const results = await Promise.allSettled([
    log.appendGrouped('t', [{ id: 'a', key: 'k', value: 1 }]),
    log.appendGrouped('t', [{ id: 'b', key: 'k', value: cyclic }]),
    log.appendGrouped('t', [{ id: 'c', key: 'k', value: 3 }]),
  ]);
  t.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
  t.deepEqual(log.fetch('t', 0, 0, 10).map((m) => m.id), ['a', 'c']);
});

test('a commit that fails rejects the publishes gathered for it, and the next turn gathers afresh', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'local-log-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const db = openEmbeddedDb(dir);
  const log = openMessageLog(db, 1, 10_000);
  log.ensureTopic('t');
  db.pragma('busy_timeout = 0');
  // Another connection holds the write lock, so the shared BEGIN IMMEDIATE fails.
  const other = openEmbeddedDb(dir);
  other.exec('BEGIN IMMEDIATE');
  const refused = await Promise.allSettled([
    log.appendGrouped('t', [{ id: 'a', key: 'k', value: 1 }]),
    log.appendGrouped('t', [{ id: 'b', key: 'k', value: 2 }]),
  ]);
  t.deepEqual(refused.map((r) => r.status), ['rejected', 'rejected']);
  other.exec('COMMIT');
  other.close();
  await log.appendGrouped('t', [{ id: 'c', key: 'k', value: 3 }]);
  t.deepEqual(log.fetch('t', 0, 0, 10).map((m) => m.id), ['c'], 'nothing refused was written, and the next publish was');
  db.close();
});
