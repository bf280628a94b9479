import type { EmbeddedDb } from '../embedded-db.ts';
import type { FailureState, IdentityStore, SessionRecord, UserRecord } from '../../ports/identity.ts';

/**
 * Embedded identity adapter on the shared SQLite file. A failed sign-in is
 * counted and, at the threshold, turned into a lock by one UPDATE, so two
 * processes counting at once never lose a failure. Expiry is compared on
 * epoch milliseconds kept beside the ISO strings the port shows.
 */
const DDL = `
CREATE TABLE IF NOT EXISTS identity_users (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  email TEXT NOT NULL UNIQUE,
  name TEXT,
  password_hash TEXT,
  failed_sign_ins INTEGER NOT NULL DEFAULT 0,
  locked_until TEXT,
  created_at TEXT NOT NULL,
  disabled_at TEXT
);
CREATE INDEX IF NOT EXISTS identity_users_by_account ON identity_users (account_id, created_at);
CREATE TABLE IF NOT EXISTS identity_sessions (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  method TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  expires_ms INTEGER NOT NULL,
  revoked_at TEXT
);
CREATE INDEX IF NOT EXISTS identity_sessions_by_user ON identity_sessions (user_id);
`;

const USER_COLUMNS = `id, account_id AS accountId, email, name, password_hash AS passwordHash, failed_sign_ins AS failedSignIns,
  locked_until AS lockedUntil, created_at AS createdAt, disabled_at AS disabledAt`;
const SESSION_COLUMNS = `id, user_id AS userId, account_id AS accountId, method, created_at AS createdAt, expires_at AS expiresAt, revoked_at AS revokedAt`;

export function createSqliteIdentity(db: EmbeddedDb): IdentityStore {
  db.exec(DDL);
  const insertUser = db.prepare(`INSERT OR IGNORE INTO identity_users (id, account_id, email, name, password_hash, failed_sign_ins, locked_until, created_at, disabled_at)
    VALUES (@id, @accountId, @email, @name, @passwordHash, @failedSignIns, @lockedUntil, @createdAt, @disabledAt)`);
  const userById = db.prepare(`SELECT ${USER_COLUMNS} FROM identity_users WHERE id = ?`);
  const userByEmail = db.prepare(`SELECT ${USER_COLUMNS} FROM identity_users WHERE email = ?`);
  const usersByAccount = db.prepare(`SELECT ${USER_COLUMNS} FROM identity_users WHERE account_id = ? ORDER BY created_at, id`);
  // Reaching the threshold locks and restarts the count, in the same statement.
  const failure = db.prepare(`UPDATE identity_users SET
      locked_until = CASE WHEN failed_sign_ins + 1 >= @max THEN @lockUntil ELSE locked_until END,
      failed_sign_ins = CASE WHEN failed_sign_ins + 1 >= @max THEN 0 ELSE failed_sign_ins + 1 END
    WHERE id = @id RETURNING failed_sign_ins AS failedSignIns, locked_until AS lockedUntil`);
  const success = db.prepare('UPDATE identity_users SET failed_sign_ins = 0, locked_until = NULL WHERE id = ?');
  const setHash = db.prepare('UPDATE identity_users SET password_hash = ? WHERE id = ?');

  const insertSession = db.prepare(`INSERT INTO identity_sessions (id, user_id, account_id, method, created_at, expires_at, expires_ms, revoked_at)
    VALUES (@id, @userId, @accountId, @method, @createdAt, @expiresAt, @expiresMs, @revokedAt)`);
  const liveSession = db.prepare(`SELECT ${SESSION_COLUMNS} FROM identity_sessions WHERE id = ? AND revoked_at IS NULL AND expires_ms > ?`);
  const revokeSession = db.prepare('UPDATE identity_sessions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL');
  const revokeUserSessions = db.prepare('UPDATE identity_sessions SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL');

  return {
    users: {
      async create(user) {
        return insertUser.run(user).changes === 1;
      },
      async get(id) {
        return (userById.get(id) as UserRecord | undefined) ?? null;
      },
      async findByEmail(email) {
        return (userByEmail.get(email) as UserRecord | undefined) ?? null;
      },
      async listByAccount(accountId) {
        return usersByAccount.all(accountId) as UserRecord[];
      },
      async recordFailure(id, max, lockUntil) {
        return (failure.get({ id, max, lockUntil }) as FailureState | undefined) ?? null;
      },
      async recordSuccess(id) {
        success.run(id);
      },
      async setPasswordHash(id, hash) {
        return setHash.run(hash, id).changes === 1;
      },
    },
    sessions: {
      async create(session: SessionRecord) {
        insertSession.run({ ...session, expiresMs: Date.parse(session.expiresAt) });
      },
      async getLive(id, now) {
        return (liveSession.get(id, Date.parse(now)) as SessionRecord | undefined) ?? null;
      },
      async revoke(id, at) {
        return revokeSession.run(at, id).changes === 1;
      },
      async revokeByUser(userId, at) {
        return revokeUserSessions.run(at, userId).changes;
      },
    },
  };
}
