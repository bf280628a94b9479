import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

export type EmbeddedDb = Database.Database;

/** ~40 MB of WAL between checkpoints when the connection runs them itself (see wal-checkpointer.ts). */
export const INLINE_AUTOCHECKPOINT_PAGES = 10_000;

/**
 * The single embedded database file shared by the embedded documents, bus and
 * analytics adapters. WAL lets readers run beside the single writer; every
 * adapter creates its own tables with `CREATE TABLE IF NOT EXISTS`.
 */
export function openEmbeddedDb(dataDir: string, fileName = 'platform.db'): EmbeddedDb {
  let db: EmbeddedDb;
  try {
    mkdirSync(dataDir, { recursive: true });
    db = new Database(path.join(dataDir, fileName));
  } catch (err) {
    // Said in the operator's terms: the setting to fix, not the first plugin that asked for the file.
    throw new Error(`the data directory ${dataDir} (DATA_DIR) cannot hold the embedded database: ${(err as Error).message}`, { cause: err });
  }
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  // Checkpoint (and fsync) every ~40 MB of WAL instead of every 4 MB: fewer
  // fsyncs on the write path; the WAL file is truncated back after each one.
  // A serving process moves them off the event loop (wal-checkpointer.ts).
  db.pragma(`wal_autocheckpoint = ${INLINE_AUTOCHECKPOINT_PAGES}`);
  db.pragma('journal_size_limit = 67108864');
  db.pragma('busy_timeout = 5000');
  // Each write of a group commit runs in a savepoint; the pages it changes are
  // kept for its rollback in a statement journal, which past 64 KB spilled to
  // a temporary file on disk (several times the WAL's own writes per POST /tts).
  db.pragma('temp_store = MEMORY');
  db.pragma('foreign_keys = ON');
  beginTransactionsImmediately(db);
  return db;
}

/**
 * Every transaction on the file begins IMMEDIATE. A DEFERRED one that reads
 * before it writes cannot wait for the write lock: when another connection
 * holds it, SQLite answers SQLITE_BUSY at once, without busy_timeout (waiting
 * there could deadlock two upgrading readers). The checkpoint thread holds
 * it for a few ms at each WAL restart (wal-checkpointer.ts), so under load
 * such writes failed now and then (a usage job close, an audiobook's
 * update). IMMEDIATE takes the lock at BEGIN, where busy_timeout applies.
 * A call inside another transaction is a savepoint either way.
 */
function beginTransactionsImmediately(db: EmbeddedDb): void {
  const transaction = db.transaction.bind(db);
  // The driver's variants carry each other (`.deferred`, `.immediate`, ...): the IMMEDIATE one stands for all.
  db.transaction = ((fn: Parameters<EmbeddedDb['transaction']>[0]) => transaction(fn).immediate) as EmbeddedDb['transaction'];
}

/** An in-memory database for unit tests. */
export function openMemoryDb(): EmbeddedDb {
  const db = new Database(':memory:');
  db.pragma('foreign_keys = ON');
  return db;
}

/** Ends a group commit's batch whose transaction SQLite rolled back on its own; `cause` is the write's error. */
class BatchRolledBack extends Error {
  constructor(cause: unknown) {
    super('the transaction was rolled back', { cause });
  }
}

export interface GroupCommit {
  /** runs `work` inside the next shared write transaction; resolves after it commits */
  run<T>(work: () => T): Promise<T>;
}

const groupCommits = new WeakMap<EmbeddedDb, GroupCommit>();

export interface GroupCommitOptions {
  /** how long a batch that could not begin is tried again before its writes fail (ms) */
  lockedRetryForMs?: number;
}

const LOCKED_RETRY_FOR_MS = 60_000;
const LOCKED_RETRY_EVERY_MS = 10;

/** SQLITE_BUSY and its extended codes: the lock was held by another connection. */
export function isBusyError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/**
 * Group commit for the embedded file. Every commit costs a WAL write (and
 * periodically a checkpoint); under load the accept path would spend most of
 * its time there. Writes requested in the same turn of the event loop run in
 * one IMMEDIATE transaction and every caller resolves only after the shared
 * commit: durability per write is unchanged, the commit count drops.
 * A `work` must be one statement or a `db.transaction` function (which nests
 * as a savepoint): either way a failing write rolls back alone and the others
 * in the batch still commit.
 *
 * A batch whose transaction cannot begin because another connection holds
 * the file's write lock past `busy_timeout` (a checkpoint, the admin CLI, a
 * backup) has run none of its writes: it waits, first in line, and is tried
 * again every few milliseconds (without SQLite's busy wait, which would hold
 * the event loop), for up to `lockedRetryForMs`; only then do its writes
 * fail. Failing them at once turned a lock held a little too long into 500s
 * and lost outcome events.
 */
export function groupCommit(db: EmbeddedDb, options: GroupCommitOptions = {}): GroupCommit {
  const existing = groupCommits.get(db);
  if (existing) return existing;
  type Item = { work: () => unknown; resolve: (v: unknown) => void; reject: (e: unknown) => void };
  const retryForMs = options.lockedRetryForMs ?? LOCKED_RETRY_FOR_MS;
  let queue: Item[] = [];
  let scheduled = false;
  /** when the batch now waiting first failed to begin; null while none waits */
  let lockedSince: number | null = null;

  const flush = () => {
    scheduled = false;
    const batch = queue;
    queue = [];
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    // A batch tried again does not wait on the lock inside SQLite (that would hold the event loop): the timer waits instead.
    const busyTimeout = lockedSince === null || !db.open ? null : (db.pragma('busy_timeout', { simple: true }) as number);
    if (busyTimeout !== null) db.pragma('busy_timeout = 0');
    try {
      db.transaction(() => {
        for (const item of batch) {
          try {
            outcomes.push({ ok: true, value: item.work() });
          } catch (error) {
            outcomes.push({ ok: false, error });
            // SQLite rolled the whole transaction back itself (a full disk, an I/O error, out of memory): the
            // writes before this one are gone, and the ones after would each commit alone, outside it, while
            // their callers were told they failed. The batch ends here, failed whole.
            if (!db.inTransaction) throw new BatchRolledBack(error);
          }
        }
      }).immediate();
    } catch (thrown) {
      const error = thrown instanceof BatchRolledBack ? thrown.cause : thrown;
      // No outcome: BEGIN itself failed, so nothing ran and the batch can simply wait its turn again.
      if (outcomes.length === 0 && isBusyError(error) && db.open) {
        lockedSince ??= Date.now();
        if (Date.now() - lockedSince < retryForMs) {
          queue = batch.concat(queue);
          scheduled = true;
          setTimeout(flush, LOCKED_RETRY_EVERY_MS);
          return;
        }
      }
      lockedSince = null;
      for (const item of batch) item.reject(error);
      return;
    } finally {
      if (busyTimeout !== null && db.open) db.pragma(`busy_timeout = ${busyTimeout}`);
    }
    lockedSince = null;
    batch.forEach((item, i) => {
      const outcome = outcomes[i];
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  };

  const commit: GroupCommit = {
    run<T>(work: () => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({ work, resolve: resolve as (v: unknown) => void, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
  };
  groupCommits.set(db, commit);
  return commit;
}
