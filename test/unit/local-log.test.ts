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

const batchOf = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ id: `m${from + i}`, key: 'k', value: from + i }));
const segmentIds = (db: ReturnType<typeof openMemoryDb>, topic: string) =>
  db.prepare('SELECT id FROM bus_segments WHERE topic = ? ORDER BY base_seq').pluck().all(topic) as number[];

test('the segments every group has committed are dropped once an append crosses a multiple of 256', (t) => {
  const log = openMessageLog(openMemoryDb(), 1, 10_000, 50);
  log.join('g', 't');
  for (let from = 0; from < 200; from += 50) log.append('t', batchOf(from, 50));
  log.commit('g', 't', 0, 150);
  t.is(log.fetch('t', 0, 0, 1000).length, 200, 'nothing pruned before a multiple of 256 is reached');
  log.append('t', batchOf(200, 100));
  const left = log.fetch('t', 0, 0, 1000);
  t.is(left[0]!.seq, 150, 'the three segments below the committed 150 are gone');
  t.is(left.length, 150);
});

test('a fetch reads across segments in order, from any sequence number, and from the oldest kept one when its own were dropped', (t) => {
  const db = openMemoryDb();
  const log = openMessageLog(db, 1, 10_000, 10);
  for (let from = 0; from < 95; from += 7) log.append('t', batchOf(from, Math.min(7, 95 - from)));
  t.true(segmentIds(db, 't').length > 5, 'several segments');
  for (const from of [0, 9, 10, 11, 40, 90, 94]) {
    for (const limit of [1, 6, 25, 1000]) {
      const got = log.fetch('t', 0, from, limit).map((m) => m.seq);
      const want = Array.from({ length: Math.max(0, Math.min(limit, 95 - from)) }, (_, i) => from + i);
      if (JSON.stringify(got) !== JSON.stringify(want)) return t.fail(`from ${from}, limit ${limit}: ${got.join(',')}`);
    }
  }
  t.deepEqual(log.fetch('t', 0, 95, 10), [], 'nothing past the end');
  log.join('g', 't');
  log.commitMany('g', 't', new Map([[0, 60]]));
  const oldest = log.fetch('t', 0, 0, 1)[0]!.seq;
  t.true(oldest <= 60 && oldest > 40, `a reader from 0 resumes at the oldest kept message (${oldest})`);
  t.is(log.lag('t', 'g'), 35);
});

test('the last segment stays until full; once full and read it goes too, and the next append starts a new one', (t) => {
  const db = openMemoryDb();
  const log = openMessageLog(db, 1, 10_000, 20);
  log.join('g', 't');
  log.append('t', batchOf(0, 15));
  log.commitMany('g', 't', new Map([[0, 15]]));
  t.is(segmentIds(db, 't').length, 1, 'a read segment that is not full is kept for the next appends');
  log.append('t', batchOf(15, 5));
  log.commitMany('g', 't', new Map([[0, 20]]));
  t.deepEqual(segmentIds(db, 't'), [], 'a full segment read to its end is dropped');
  t.is(db.prepare("SELECT COUNT(*) FROM sqlite_master WHERE name GLOB 'bus_segment_[0-9]*'").pluck().get(), 0, 'with its table');
  log.append('t', batchOf(20, 3));
  t.deepEqual(log.fetch('t', 0, 0, 10).map((m) => m.seq), [20, 21, 22], 'sequence numbers go on');
  t.is(log.lag('t', 'g'), 3);
});

test('an append rolled back leaves no segment, and a segment id that comes back for another partition reads as that partition', (t) => {
  const db = openMemoryDb();
  const log = openMessageLog(db, 2, 10_000, 10);
  const keyFor = (part: number) => Array.from({ length: 100 }, (_, i) => `k${i}`).find((k) => partitionOf(k, 2) === part)!;
  log.ensureTopic('t');
  t.throws(() => db.transaction(() => {
    log.append('t', [{ id: 'lost', key: keyFor(0), value: 0 }]);
    t.is(log.fetch('t', 0, 0, 10).length, 1, 'written inside the transaction');
    throw new Error('rolled back');
  })(), { message: 'rolled back' });
  t.deepEqual(segmentIds(db, 't'), []);
  log.append('t', [{ id: 'kept', key: keyFor(1), value: 1 }]);
  t.deepEqual(log.fetch('t', 0, 0, 10), []);
  t.deepEqual(log.fetch('t', 1, 0, 10).map((m) => [m.part, m.id]), [[1, 'kept']]);
});

test('a log written before segments (one bus_messages table) is moved into them when the file is opened, offsets and lag unchanged', (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'local-log-legacy-'));
  try {
    const old = openEmbeddedDb(dir);
    old.exec(`CREATE TABLE bus_partitions (topic TEXT NOT NULL, part INTEGER NOT NULL, next_seq INTEGER NOT NULL, PRIMARY KEY (topic, part)) WITHOUT ROWID;
      CREATE TABLE bus_messages (topic TEXT NOT NULL, part INTEGER NOT NULL, seq INTEGER NOT NULL, id TEXT NOT NULL, key TEXT NOT NULL,
        value TEXT NOT NULL, published_at TEXT NOT NULL, PRIMARY KEY (topic, part, seq)) WITHOUT ROWID;
      CREATE TABLE bus_offsets (grp TEXT NOT NULL, topic TEXT NOT NULL, part INTEGER NOT NULL, next_seq INTEGER NOT NULL, PRIMARY KEY (grp, topic, part)) WITHOUT ROWID;`);
    old.prepare("INSERT INTO bus_partitions VALUES ('t', 0, 300), ('t', 1, 5)").run();
    const insert = old.prepare("INSERT INTO bus_messages VALUES ('t', ?, ?, ?, 'k', ?, '2026-11-27T00:00:00.000Z')");
    for (let seq = 250; seq < 300; seq++) insert.run(0, seq, `a${seq}`, JSON.stringify(seq));
    for (let seq = 0; seq < 5; seq++) insert.run(1, seq, `b${seq}`, JSON.stringify(seq));
    old.prepare("INSERT INTO bus_offsets VALUES ('g', 't', 0, 260), ('g', 't', 1, 0)").run();
    old.close();

    const db = openEmbeddedDb(dir);
    const log = openMessageLog(db, 2, 10_000);
    t.is(db.prepare("SELECT COUNT(*) FROM sqlite_master WHERE name = 'bus_messages'").pluck().get(), 0, 'the old table is gone');
    t.deepEqual(log.fetch('t', 0, 0, 1000).map((m) => m.seq), Array.from({ length: 50 }, (_, i) => 250 + i));
    t.deepEqual(log.fetch('t', 1, 0, 1000).map((m) => m.id), ['b0', 'b1', 'b2', 'b3', 'b4']);
    t.is(log.committed('g', 't', 0), 260);
    t.is(log.lag('t', 'g'), 40 + 5);
    log.append('t', [{ id: 'after', key: 'x', value: 1 }]);
    t.is(log.lag('t', 'g'), 46, 'appends go on after the moved messages');
    db.close();
    // Opened again: nothing to move, nothing moved twice.
    const again = openEmbeddedDb(dir);
    t.is(openMessageLog(again, 2, 10_000).fetch('t', 0, 0, 1000).length + openMessageLog(again, 2, 10_000).fetch('t', 1, 0, 1000).length, 56);
    again.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
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
