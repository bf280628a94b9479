import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { groupCommit, openEmbeddedDb } from '../../core/adapters/embedded-db.ts';

/**
 * A write of a group commit that SQLite answers by rolling back the whole
 * transaction itself (a full disk, an I/O error, out of memory) takes every
 * write of the batch with it, those before it included. None may then run
 * outside the transaction: each would commit alone, autocommitted, while its
 * caller is told it failed (a POST /tts answered 503 after its job and
 * charge were kept). SQLite's max_page_count gives the full disk here.
 */
test('a write that makes SQLite roll the shared transaction back fails the whole batch, and nothing of the batch is kept', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'group-commit-full-'));
  const db = openEmbeddedDb(dir);
  t.teardown(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
  db.prepare('INSERT INTO t (v) VALUES (?)').run('before');
  db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  const writes = groupCommit(db);
  const results = await Promise.allSettled([
    writes.run(() => insert.run('small, fits')),
    writes.run(db.transaction(() => {
      for (let i = 0; i < 100; i++) insert.run('x'.repeat(1000));
    })),
    writes.run(() => insert.run('after the failure')),
  ]);
  t.deepEqual(results.map((r) => r.status), ['rejected', 'rejected', 'rejected']);
  t.deepEqual(results.map((r) => (r as PromiseRejectedResult).reason?.code), ['SQLITE_FULL', 'SQLITE_FULL', 'SQLITE_FULL'], 'each told why: the disk (a 503)');
  t.deepEqual(db.prepare('SELECT v FROM t').pluck().all(), ['before'], 'nothing of the batch was kept');
  t.false(db.inTransaction);

  db.pragma('max_page_count = 1073741823');
  await writes.run(() => insert.run('later'));
  t.deepEqual(db.prepare('SELECT v FROM t').pluck().all(), ['before', 'later'], 'the next batch commits');
});
