import type { EmbeddedDb } from '../embedded-db.ts';
import type {
  Account,
  AccountsStore,
  ApiKeyRecord,
  ClonedVoice,
  ClonesStore,
  Documents,
  KeysStore,
} from '../../ports/documents.ts';
import { createSqliteGrants, createSqliteHolds, createSqliteLedger, createSqliteOutbox } from './sqlite-billing.ts';
import { createSqliteJobs } from './sqlite-jobs.ts';
import { createSqliteWebhooks } from '../webhooks/sqlite.ts';
import { createSqliteIdentity } from '../identity/sqlite.ts';
import { createSqliteSpill } from './sqlite-spill.ts';
import { ACCOUNT_COLUMNS, CLONE_COLUMNS, KEY_COLUMNS, createDocumentTables } from './sqlite-schema.ts';

/**
 * Embedded documents adapter on the shared SQLite file (better-sqlite3).
 * Statements are prepared once here; better-sqlite3 runs them synchronously,
 * the async port methods only turn exceptions into rejections.
 */
export function createSqliteDocuments(db: EmbeddedDb): Documents {
  createDocumentTables(db);
  const ping = db.prepare('SELECT 1');
  return {
    accounts: createAccounts(db),
    keys: createKeys(db),
    grants: createSqliteGrants(db),
    holds: createSqliteHolds(db),
    outbox: createSqliteOutbox(db),
    ledger: createSqliteLedger(db),
    clones: createClones(db),
    jobs: createSqliteJobs(db),
    webhooks: createSqliteWebhooks(db),
    identity: createSqliteIdentity(db),
    spill: createSqliteSpill(db),
    async ping() {
      ping.get();
    },
    async close() {
      // The handle is shared with the bus and analytics adapters; whoever opened it closes it.
    },
  };
}

type AccountRow = Omit<Account, 'trialUsed'> & { trialUsed: number };

function toAccount(row: AccountRow): Account {
  return { ...row, trialUsed: row.trialUsed === 1 };
}

function createAccounts(db: EmbeddedDb): AccountsStore {
  const insert = db.prepare(
    'INSERT INTO accounts (id, name, email, trial_used, created_at) VALUES (?, ?, ?, 0, ?)',
  );
  const select = db.prepare(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = ?`);
  const claim = db.prepare('UPDATE accounts SET trial_used = 1 WHERE id = ? AND trial_used = 0');
  return {
    async create(input) {
      const account: Account = {
        id: input.id,
        name: input.name,
        email: input.email ?? null,
        trialUsed: false,
        createdAt: input.createdAt,
      };
      insert.run(account.id, account.name, account.email, account.createdAt);
      return account;
    },
    async get(id) {
      const row = select.get(id) as AccountRow | undefined;
      return row ? toAccount(row) : null;
    },
    async claimTrial(id) {
      return claim.run(id).changes === 1;
    },
  };
}

function createKeys(db: EmbeddedDb): KeysStore {
  const insert = db.prepare(`
    INSERT INTO api_keys (id, account_id, grant_id, kind, hash, prefix, name, created_at, revoked_at, last_used_at)
    VALUES (@id, @accountId, @grantId, @kind, @hash, @prefix, @name, @createdAt, @revokedAt, @lastUsedAt)`);
  const byHash = db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE hash = ?`);
  const byId = db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ?`);
  const byAccount = db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = ? ORDER BY created_at, rowid`);
  const active = db.prepare('SELECT COUNT(*) AS n FROM api_keys WHERE account_id = ? AND revoked_at IS NULL');
  const revoke = db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL');
  const touch = db.prepare('UPDATE api_keys SET last_used_at = @at WHERE id = @id AND (last_used_at IS NULL OR last_used_at < @at)');
  return {
    async create(record) {
      insert.run({ ...record, name: record.name ?? null, revokedAt: record.revokedAt ?? null, lastUsedAt: record.lastUsedAt ?? null });
      return { ...record, lastUsedAt: record.lastUsedAt ?? null };
    },
    async findByHash(hash) {
      return (byHash.get(hash) as ApiKeyRecord | undefined) ?? null;
    },
    async get(id) {
      return (byId.get(id) as ApiKeyRecord | undefined) ?? null;
    },
    async listByAccount(accountId) {
      return byAccount.all(accountId) as ApiKeyRecord[];
    },
    async countActive(accountId) {
      return (active.get(accountId) as { n: number }).n;
    },
    async revoke(id, at) {
      return revoke.run(at, id).changes === 1;
    },
    async touch(id, at) {
      touch.run({ id, at });
    },
  };
}

type CloneRow = Omit<ClonedVoice, 'referenceAvailable'> & { referenceAvailable: number };

function toClone(row: CloneRow): ClonedVoice {
  return { ...row, referenceAvailable: row.referenceAvailable === 1 };
}

function createClones(db: EmbeddedDb): ClonesStore {
  const insert = db.prepare(`
    INSERT INTO cloned_voices (id, account_id, name, engine, reference_available, base_voice_id, created_at)
    VALUES (@id, @accountId, @name, @engine, @referenceAvailable, @baseVoiceId, @createdAt)`);
  const byId = db.prepare(`SELECT ${CLONE_COLUMNS} FROM cloned_voices WHERE id = ?`);
  const byAccount = db.prepare(
    `SELECT ${CLONE_COLUMNS} FROM cloned_voices WHERE account_id = ? ORDER BY created_at, rowid`,
  );
  return {
    async create(voice) {
      insert.run({ ...voice, referenceAvailable: voice.referenceAvailable ? 1 : 0 });
      return { ...voice };
    },
    async get(id) {
      const row = byId.get(id) as CloneRow | undefined;
      return row ? toClone(row) : null;
    },
    async listByAccount(accountId) {
      return (byAccount.all(accountId) as CloneRow[]).map(toClone);
    },
  };
}
