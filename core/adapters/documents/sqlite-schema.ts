import type { EmbeddedDb } from '../embedded-db.ts';
import type { Grant, GrantStatus, LedgerEntry } from '../../ports/documents.ts';

/**
 * Tables of the embedded documents adapter. The file is shared with the bus
 * and analytics adapters, so every name here is specific to documents.
 * Columns are snake_case; SELECTs alias them to the port's camelCase names so
 * rows map onto the port types with only booleans and JSON to convert.
 */
const DDL = `
CREATE TABLE IF NOT EXISTS accounts (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  email TEXT,
  trial_used INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS api_keys (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  grant_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  hash TEXT NOT NULL UNIQUE,
  prefix TEXT NOT NULL,
  name TEXT,
  created_at TEXT NOT NULL,
  revoked_at TEXT,
  last_used_at TEXT
);
CREATE INDEX IF NOT EXISTS api_keys_by_account ON api_keys (account_id, created_at);
CREATE TABLE IF NOT EXISTS grants (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  plan TEXT NOT NULL,
  total_tokens INTEGER NOT NULL,
  used_tokens INTEGER NOT NULL CHECK (used_tokens >= 0),
  daily_cap INTEGER,
  weekly_cap INTEGER,
  day_key TEXT,
  day_used INTEGER NOT NULL DEFAULT 0,
  week_key TEXT,
  week_used INTEGER NOT NULL DEFAULT 0,
  expires_at TEXT,
  expires_ms INTEGER,
  is_gift INTEGER NOT NULL DEFAULT 0,
  engines TEXT NOT NULL,
  status TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS grants_by_account ON grants (account_id, created_at);
CREATE TABLE IF NOT EXISTS ledger_outbox (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  grant_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  key_id TEXT,
  charge_id TEXT NOT NULL,
  request_id TEXT,
  route TEXT NOT NULL,
  tokens INTEGER NOT NULL,
  day_key TEXT,
  week_key TEXT,
  at TEXT NOT NULL,
  published INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS ledger_outbox_pending ON ledger_outbox (seq) WHERE published = 0;
CREATE INDEX IF NOT EXISTS ledger_outbox_by_charge ON ledger_outbox (grant_id, charge_id);
CREATE UNIQUE INDEX IF NOT EXISTS ledger_outbox_one_refund ON ledger_outbox (charge_id) WHERE kind = 'refund';
CREATE TABLE IF NOT EXISTS charge_holds (
  charge_id TEXT PRIMARY KEY,
  instance TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS process_beats (
  instance TEXT PRIMARY KEY,
  until_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS bus_spill (
  seq INTEGER PRIMARY KEY,
  topic TEXT NOT NULL,
  id TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  UNIQUE (topic, id)
);
CREATE TABLE IF NOT EXISTS ledger (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  grant_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  key_id TEXT,
  charge_id TEXT NOT NULL,
  request_id TEXT,
  route TEXT NOT NULL,
  tokens INTEGER NOT NULL,
  day_key TEXT,
  week_key TEXT,
  at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ledger_by_grant ON ledger (grant_id, at);
CREATE TABLE IF NOT EXISTS cloned_voices (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  name TEXT NOT NULL,
  engine TEXT NOT NULL,
  reference_available INTEGER NOT NULL,
  base_voice_id TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS cloned_voices_by_account ON cloned_voices (account_id, created_at);
`;

/** Columns added after a table first shipped: a file made by an earlier version gets them on open. */
const ADDED_COLUMNS: Array<{ table: string; column: string; type: string }> = [
  { table: 'api_keys', column: 'last_used_at', type: 'TEXT' },
];

export function createDocumentTables(db: EmbeddedDb): void {
  db.exec(DDL);
  for (const { table, column, type } of ADDED_COLUMNS) {
    const columns = db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>;
    if (!columns.some((c) => c.name === column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
  }
}

export const ACCOUNT_COLUMNS =
  'id, name, email, trial_used AS trialUsed, created_at AS createdAt';

export const KEY_COLUMNS =
  'id, account_id AS accountId, grant_id AS grantId, kind, hash, prefix, name, ' +
  'created_at AS createdAt, revoked_at AS revokedAt, last_used_at AS lastUsedAt';

export const GRANT_COLUMNS =
  'id, account_id AS accountId, plan, total_tokens AS totalTokens, used_tokens AS usedTokens, ' +
  'daily_cap AS dailyCap, weekly_cap AS weeklyCap, day_key AS dayKey, day_used AS dayUsed, ' +
  'week_key AS weekKey, week_used AS weekUsed, expires_at AS expiresAt, is_gift AS isGift, ' +
  'engines, status, created_at AS createdAt';

export const ENTRY_COLUMNS =
  'id, kind, grant_id AS grantId, account_id AS accountId, key_id AS keyId, charge_id AS chargeId, ' +
  'request_id AS requestId, route, tokens, day_key AS dayKey, week_key AS weekKey, at';

/** INSERT column list and named parameters matching a LedgerEntry's fields. */
export const ENTRY_INSERT =
  '(id, kind, grant_id, account_id, key_id, charge_id, request_id, route, tokens, day_key, week_key, at) ' +
  'VALUES (@id, @kind, @grantId, @accountId, @keyId, @chargeId, @requestId, @route, @tokens, @dayKey, @weekKey, @at)';

export const CLONE_COLUMNS =
  'id, account_id AS accountId, name, engine, reference_available AS referenceAvailable, ' +
  'base_voice_id AS baseVoiceId, created_at AS createdAt';

export type GrantRow = Omit<Grant, 'isGift' | 'engines' | 'status'> & {
  isGift: number;
  engines: string;
  status: string;
};

export function toGrant(row: GrantRow): Grant {
  return {
    ...row,
    isGift: row.isGift === 1,
    engines: JSON.parse(row.engines) as string[],
    status: row.status as GrantStatus,
  };
}

/** Rows from ENTRY_COLUMNS already have the LedgerEntry shape. */
export function toEntry(row: unknown): LedgerEntry {
  return row as LedgerEntry;
}

/** better-sqlite3 binds named parameters from plain objects: no undefined, no booleans. */
export function entryParams(entry: LedgerEntry): Record<string, string | number | null> {
  return {
    id: entry.id,
    kind: entry.kind,
    grantId: entry.grantId,
    accountId: entry.accountId,
    keyId: entry.keyId ?? null,
    chargeId: entry.chargeId,
    requestId: entry.requestId ?? null,
    route: entry.route,
    tokens: entry.tokens,
    dayKey: entry.dayKey ?? null,
    weekKey: entry.weekKey ?? null,
    at: entry.at,
  };
}
