import type { EmbeddedDb } from '../../core/adapters/embedded-db.ts';
import { indexedFields, type OAuthRecord, type OAuthStore } from './store.ts';

/** The authorization server's records on the embedded SQLite file (table `<prefix>records`). */
export function createSqliteOAuthStore(db: EmbeddedDb, prefix: string): OAuthStore {
  const table = `${prefix}records`;
  db.exec(`
    CREATE TABLE IF NOT EXISTS ${table} (
      model TEXT NOT NULL,
      id TEXT NOT NULL,
      payload TEXT NOT NULL,
      grant_id TEXT,
      uid TEXT,
      user_code TEXT,
      account_id TEXT,
      expires_at INTEGER,
      consumed INTEGER,
      PRIMARY KEY (model, id)
    );
    CREATE INDEX IF NOT EXISTS ${table}_by_grant ON ${table} (grant_id) WHERE grant_id IS NOT NULL;
    CREATE INDEX IF NOT EXISTS ${table}_by_uid ON ${table} (uid) WHERE uid IS NOT NULL;
    CREATE INDEX IF NOT EXISTS ${table}_by_user_code ON ${table} (user_code) WHERE user_code IS NOT NULL;
    CREATE INDEX IF NOT EXISTS ${table}_by_account ON ${table} (model, account_id) WHERE account_id IS NOT NULL;
    CREATE INDEX IF NOT EXISTS ${table}_by_expiry ON ${table} (expires_at) WHERE expires_at IS NOT NULL;
  `);
  const live = '(expires_at IS NULL OR expires_at > @now)';
  const upsert = db.prepare(`INSERT INTO ${table} (model, id, payload, grant_id, uid, user_code, account_id, expires_at, consumed)
    VALUES (@model, @id, @payload, @grantId, @uid, @userCode, @accountId, @expiresAt, NULL)
    ON CONFLICT (model, id) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id, uid = excluded.uid,
      user_code = excluded.user_code, account_id = excluded.account_id, expires_at = excluded.expires_at, consumed = NULL`);
  const insertIfAbsent = db.prepare(`INSERT OR IGNORE INTO ${table} (model, id, payload, grant_id, uid, user_code, account_id, expires_at, consumed)
    VALUES (@model, @id, @payload, @grantId, @uid, @userCode, @accountId, @expiresAt, NULL)`);
  const byId = db.prepare(`SELECT payload, consumed FROM ${table} WHERE model = @model AND id = @id AND ${live}`);
  const byUid = db.prepare(`SELECT payload, consumed FROM ${table} WHERE model = @model AND uid = @uid AND ${live}`);
  const byUserCode = db.prepare(`SELECT payload, consumed FROM ${table} WHERE model = @model AND user_code = @userCode AND ${live}`);
  const consume = db.prepare(`UPDATE ${table} SET consumed = @at WHERE model = @model AND id = @id`);
  const destroy = db.prepare(`DELETE FROM ${table} WHERE model = @model AND id = @id`);
  const revoke = db.prepare(`DELETE FROM ${table} WHERE model = @model AND grant_id = @grantId`);
  const byAccount = db.prepare(`SELECT id, payload FROM ${table} WHERE model = @model AND account_id = @accountId AND ${live} ORDER BY id`);
  const purge = db.prepare(`DELETE FROM ${table} WHERE expires_at IS NOT NULL AND expires_at <= @now`);

  type Row = { payload: string; consumed: number | null };
  const read = (row: Row | undefined) => {
    if (!row) return null;
    const payload = JSON.parse(row.payload) as Record<string, unknown>;
    return row.consumed === null ? payload : { ...payload, consumed: row.consumed };
  };
  const params = (r: OAuthRecord) => ({ model: r.model, id: r.id, payload: JSON.stringify(r.payload), expiresAt: r.expiresAt, ...indexedFields(r.payload) });

  return {
    async upsert(record) {
      upsert.run(params(record));
    },
    async insertIfAbsent(record) {
      insertIfAbsent.run(params(record));
      return read(byId.get({ model: record.model, id: record.id, now: Date.now() }) as Row | undefined) ?? record.payload;
    },
    async find(model, id, now) {
      return read(byId.get({ model, id, now }) as Row | undefined);
    },
    async findByUid(model, uid, now) {
      return read(byUid.get({ model, uid, now }) as Row | undefined);
    },
    async findByUserCode(model, userCode, now) {
      return read(byUserCode.get({ model, userCode, now }) as Row | undefined);
    },
    async consume(model, id, at) {
      consume.run({ model, id, at });
    },
    async destroy(model, id) {
      destroy.run({ model, id });
    },
    async revokeByGrantId(model, grantId) {
      revoke.run({ model, grantId });
    },
    async listByAccount(model, accountId, now) {
      return (byAccount.all({ model, accountId, now }) as Array<{ id: string; payload: string }>).map((r) => ({ id: r.id, payload: JSON.parse(r.payload) }));
    },
    async purgeExpired(now) {
      return purge.run({ now }).changes;
    },
  };
}
