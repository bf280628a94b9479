import test from 'ava';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { groupCommit, INLINE_AUTOCHECKPOINT_PAGES, openEmbeddedDb, type EmbeddedDb } from '../../core/adapters/embedded-db.ts';
import { checkpointInBackground, type CheckpointResult } from '../../core/adapters/wal-checkpointer.ts';

const autocheckpoint = (db: EmbeddedDb) => db.pragma('wal_autocheckpoint', { simple: true }) as number;

/** Group-committed inserts of ~1 KB rows for `ms`, the accept path's shape: returns the rows written and the largest WAL file seen. */
async function writeSteadily(db: EmbeddedDb, ms: number): Promise<{ rows: number; largestWal: number }> {
  db.exec('CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT)');
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  const writes = groupCommit(db);
  const wal = `${db.name}-wal`;
  let rows = 0;
  let largestWal = 0;
  const end = Date.now() + ms;
  while (Date.now() < end) {
    await Promise.all(Array.from({ length: 20 }, () => writes.run(() => insert.run('x'.repeat(1000)))));
    rows += 20;
    // About 10 MB of rows a second, in commits ~1 ms apart: the accept path writes about twice that, in bigger commits.
    await new Promise((resolve) => setTimeout(resolve, 1));
    largestWal = Math.max(largestWal, statSync(wal).size);
  }
  return { rows, largestWal };
}

function tempDb(t: { teardown(fn: () => void): void }): EmbeddedDb {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'wal-checkpointer-'));
  const db = openEmbeddedDb(dir);
  t.teardown(() => {
    if (db.open) db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return db;
}

test('under steady group commits the thread checkpoints and the WAL starts over, so it stays small; every row is kept', async (t) => {
  const db = tempDb(t);
  const results: CheckpointResult[] = [];
  const checkpointer = checkpointInBackground(db, { intervalMs: 20, restartFrames: 100, onCheckpoint: (r) => results.push(r) });
  t.true(await checkpointer.ready);
  const { rows, largestWal } = await writeSteadily(db, 3_000);
  await checkpointer.stop();
  const restarts = results.filter((r, i) => i > 0 && r.log < results[i - 1]!.log).length;
  t.log(`${rows} rows, ${results.length} checkpoints, ${restarts} restarts, largest WAL ${(largestWal / 1e6).toFixed(1)} MB`);
  t.true(restarts > 0, 'the WAL started over');
  // Without checkpoints the WAL holds every page written: at least the rows' own kilobyte each.
  t.true(rows * 1000 > 3 * 8e6, 'enough was written to tell');
  t.true(largestWal < 8e6, `largest WAL ${largestWal} bytes`);
  t.is(db.prepare('SELECT count(*) FROM t').pluck().get(), rows);
});

test('while the thread runs the serving connection leaves checkpoints to it, and runs them itself again once it is stopped', async (t) => {
  const db = tempDb(t);
  const checkpointer = checkpointInBackground(db, { intervalMs: 50 });
  t.true(await checkpointer.ready);
  t.is(autocheckpoint(db), 0);
  await checkpointer.stop();
  t.is(autocheckpoint(db), INLINE_AUTOCHECKPOINT_PAGES);
  await checkpointer.stop();
});

test('a thread that cannot open the file hands checkpoints back to the serving connection and says so once', async (t) => {
  const db = tempDb(t);
  // The open connection keeps working on the unlinked file; the thread finds no file to open.
  rmSync(path.dirname(db.name), { recursive: true, force: true });
  db.pragma('wal_autocheckpoint = 0');
  const told: Error[] = [];
  const checkpointer = checkpointInBackground(db, { onFallback: (err) => told.push(err) });
  t.false(await checkpointer.ready);
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.is(told.length, 1);
  t.is(autocheckpoint(db), INLINE_AUTOCHECKPOINT_PAGES);
  await checkpointer.stop();
});
