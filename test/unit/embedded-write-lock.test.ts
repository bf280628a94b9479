import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openEmbeddedDb, type EmbeddedDb } from '../../core/adapters/embedded-db.ts';
import { createSqliteAnalytics } from '../../core/adapters/analytics/sqlite.ts';
import { openMessageLog } from '../../core/adapters/bus/local-log.ts';

const DRIVER = createRequire(import.meta.url).resolve('better-sqlite3');
const HOLD_MS = 300;

/**
 * Another connection takes the file's write lock, as the WAL checkpoint
 * thread does at each restart of the WAL, and keeps it until HOLD_MS after
 * `letGo()`: the test calls it just before its own write, so however slow the
 * machine, the lock is still held when that write begins.
 */
async function holdWriteLock(file: string): Promise<{ letGo(): void; released: Promise<void> }> {
  const child = spawn(process.execPath, ['-e', `
    const Database = require(${JSON.stringify(DRIVER)});
    const db = new Database(${JSON.stringify(file)});
    db.exec('BEGIN IMMEDIATE');
    process.stdout.write('held\\n');
    process.stdin.once('data', () => setTimeout(() => { db.exec('COMMIT'); db.close(); process.exit(0); }, ${HOLD_MS}));
  `], { stdio: ['pipe', 'pipe', 'inherit'] });
  const released = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise((resolve, reject) => {
    child.stdout!.once('data', resolve);
    child.once('exit', (code) => reject(new Error(`the lock holder exited ${code}`)));
  });
  return { letGo: () => child.stdin!.write('go\n'), released };
}

/** Whether another connection holds the write lock now: a BEGIN IMMEDIATE that may not wait says so. */
function writeLockHeld(db: EmbeddedDb): boolean {
  const timeout = db.pragma('busy_timeout', { simple: true }) as number;
  db.pragma('busy_timeout = 0');
  try {
    db.exec('BEGIN IMMEDIATE');
    db.exec('ROLLBACK');
    return false;
  } catch (err) {
    if ((err as { code?: string }).code === 'SQLITE_BUSY') return true;
    throw err;
  } finally {
    db.pragma(`busy_timeout = ${timeout}`);
  }
}

function openTemp(t: { teardown(fn: () => void): void }): EmbeddedDb {
  const dir = mkdtempSync(path.join(tmpdir(), 'vieneu-lock-'));
  const db = openEmbeddedDb(dir);
  t.teardown(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return db;
}

test('a transaction that reads before it writes waits for the write lock another connection holds, instead of failing with SQLITE_BUSY', async (t) => {
  const db = openTemp(t);
  db.exec('CREATE TABLE counter (n INTEGER)');
  const bump = db.transaction(() => {
    const n = (db.prepare('SELECT COUNT(*) FROM counter').pluck().get() as number);
    db.prepare('INSERT INTO counter (n) VALUES (?)').run(n + 1);
  });
  const { letGo, released } = await holdWriteLock(db.name);
  letGo();
  // Without this the test could pass by coming late, after the holder let go.
  t.true(writeLockHeld(db), 'the other connection holds the write lock as the transaction begins');
  t.notThrows(() => bump());
  await released;
  t.is(db.prepare('SELECT MAX(n) FROM counter').pluck().get(), 1);
  // Nested in another transaction it is still a savepoint, rolled back alone.
  db.transaction(() => {
    bump();
    t.throws(() => db.transaction(() => { bump(); throw new Error('undo'); })(), { message: 'undo' });
  })();
  t.is(db.prepare('SELECT COUNT(*) FROM counter').pluck().get(), 2);
});

test('the embedded usage store records job closes while the checkpoint thread holds the write lock (seen failing in the soak)', async (t) => {
  const db = openTemp(t);
  const analytics = createSqliteAnalytics(db);
  t.teardown(() => analytics.close());
  const at = new Date().toISOString();
  await analytics.recordOutcomes([{
    id: 'evt_queued', at, requestId: 'req_1', accountId: 'acc_1', keyId: 'key_1', grantId: 'grt_1', route: 'tts', status: 201,
    result: 'queued', tokensCharged: 195, tokensRefunded: 0, characters: 50, audioSeconds: 0, genMs: null, voice: 'v', voiceName: 'V',
    engine: 'v4', errorCode: null, cacheHit: false, queued: true, jobId: 'job_1',
  } as never]);
  const { letGo, released } = await holdWriteLock(db.name);
  letGo();
  t.true(writeLockHeld(db), 'the other connection holds the write lock as the close is recorded');
  await t.notThrowsAsync(analytics.recordJobCloses([{ id: 'close_1', at, jobId: 'job_1', result: 'ok', audioSeconds: 2.5, genMs: 120, tokensRefunded: 0, errorCode: null }]));
  await released;
  t.is(db.prepare('SELECT COUNT(*) FROM usage_job_closes').pluck().get(), 1);
});

test('a bus consumer\'s fetch is a read: it answers while another connection holds the write lock, across segments', async (t) => {
  const db = openTemp(t);
  const log = openMessageLog(db, 1, 10_000, 10);
  for (let from = 0; from < 35; from += 5) log.append('t', Array.from({ length: 5 }, (_, i) => ({ id: `m${from + i}`, key: 'k', value: from + i })));
  const { letGo, released } = await holdWriteLock(db.name);
  t.true(writeLockHeld(db), 'the other connection holds the write lock');
  // Begun IMMEDIATE, the fetch would wait for the lock (busy_timeout) and then fail: the holder keeps it until told.
  t.deepEqual(log.fetch('t', 0, 3, 20).map((m) => m.seq), Array.from({ length: 20 }, (_, i) => 3 + i));
  letGo();
  await released;
});
