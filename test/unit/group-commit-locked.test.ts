import test from 'ava';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { groupCommit, isBusyError, openEmbeddedDb, type EmbeddedDb } from '../../core/adapters/embedded-db.ts';

/**
 * Nothing accepted is lost: a group commit whose transaction cannot begin
 * because another connection holds the write lock (past busy_timeout) has
 * run none of its writes, so it waits for the lock instead of failing them.
 */

function tempFile(t: { teardown(fn: () => void): void }): { db: EmbeddedDb; other: Database.Database } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'group-commit-'));
  const db = openEmbeddedDb(dir);
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
  // No busy wait inside SQLite: BEGIN fails at once while the lock is held, as it does after busy_timeout.
  db.pragma('busy_timeout = 0');
  const other = new Database(db.name);
  t.teardown(() => {
    if (other.inTransaction) other.exec('ROLLBACK');
    other.close();
    if (db.open) db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { db, other };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('writes of a batch that could not begin wait for the lock and then all commit, in order; the event loop stays free meanwhile', async (t) => {
  const { db, other } = tempFile(t);
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  const writes = groupCommit(db);
  other.exec('BEGIN IMMEDIATE');
  let settled = 0;
  const first = ['a', 'b', 'c'].map((v) => writes.run(() => insert.run(v).lastInsertRowid).finally(() => settled++));
  // Writes asked for while the first batch waits go after it.
  await sleep(30);
  const later = writes.run(() => insert.run('d').lastInsertRowid).finally(() => settled++);
  const ticks = await new Promise<number>((resolve) => {
    let n = 0;
    const timer = setInterval(() => n++, 5);
    setTimeout(() => { clearInterval(timer); resolve(n); }, 100);
  });
  t.is(settled, 0, 'nothing settles while the lock is held');
  t.true(ticks >= 10, `timers ran ${ticks} times in 100 ms while the batch waited`);
  other.exec('COMMIT');
  t.deepEqual(await Promise.all([...first, later]), [1, 2, 3, 4]);
  t.deepEqual(db.prepare('SELECT v FROM t ORDER BY id').pluck().all(), ['a', 'b', 'c', 'd']);
  t.is(db.pragma('busy_timeout', { simple: true }), 0, 'the connection keeps its own busy_timeout');
});

test('a batch still locked out after lockedRetryForMs fails with SQLITE_BUSY, and the next one commits once the lock is free', async (t) => {
  const { db, other } = tempFile(t);
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  const writes = groupCommit(db, { lockedRetryForMs: 80 });
  other.exec('BEGIN IMMEDIATE');
  const started = Date.now();
  const error = await t.throwsAsync(writes.run(() => insert.run('x')), { any: true });
  t.true(isBusyError(error), String(error));
  t.true(Date.now() - started >= 70, 'it was tried again for about lockedRetryForMs');
  other.exec('COMMIT');
  await writes.run(() => insert.run('y'));
  t.deepEqual(db.prepare('SELECT v FROM t').pluck().all(), ['y']);
});

test('a write that fails on its own is not tried again: only a batch whose BEGIN was refused waits', async (t) => {
  const { db } = tempFile(t);
  const writes = groupCommit(db);
  let runs = 0;
  const failing = () => {
    runs++;
    const error = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    throw error;
  };
  await t.throwsAsync(writes.run(failing), { message: 'database is locked' });
  t.is(runs, 1);
});
