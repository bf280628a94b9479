import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

export type EmbeddedDb = Database.Database;

/**
 * The single embedded database file shared by the embedded documents, bus and
 * analytics adapters. WAL lets readers run beside the single writer; every
 * adapter creates its own tables with `CREATE TABLE IF NOT EXISTS`.
 */
export function openEmbeddedDb(dataDir: string, fileName = 'platform.db'): EmbeddedDb {
  mkdirSync(dataDir, { recursive: true });
  const db = new Database(path.join(dataDir, fileName));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  return db;
}

/** An in-memory database for unit tests. */
export function openMemoryDb(): EmbeddedDb {
  const db = new Database(':memory:');
  db.pragma('foreign_keys = ON');
  return db;
}
