import { groupCommit, type EmbeddedDb } from '../embedded-db.ts';
import type {
  ChargeCommand,
  ChargeWriteResult,
  Grant,
  GrantsStore,
  GrantStatus,
  HoldsStore,
  LedgerEntry,
  LedgerStore,
  OutboxStore,
  RefundCommand,
} from '../../ports/documents.ts';
import { BEATS_KEPT_MS, chargeEntry, checkCharge, checkRefund, expiresAtMs } from './commands.ts';
import {
  ENTRY_COLUMNS,
  ENTRY_INSERT,
  GRANT_COLUMNS,
  entryParams,
  toEntry,
  toGrant,
  type GrantRow,
} from './sqlite-schema.ts';

/**
 * Grants, their outbox and the ledger on the embedded database. A charge or a
 * refund and its outbox row commit in one IMMEDIATE transaction: the write
 * lock is taken before anything is read, so another process sharing the
 * file cannot slip a charge between our check and our write.
 */

/** How stale another process's grant writes may look to the active-grant cache. */
export const VERSION_RECHECK_MS = 10;

// `IS` instead of `=` so a grant that never counted a window (NULL key) reads as "window rolled over".
const CHARGE_SQL = `
UPDATE grants SET
  used_tokens = used_tokens + @tokens,
  day_used = CASE WHEN day_key IS @dayKey THEN day_used + @tokens ELSE @tokens END,
  day_key = @dayKey,
  week_used = CASE WHEN week_key IS @weekKey THEN week_used + @tokens ELSE @tokens END,
  week_key = @weekKey
WHERE id = @grantId
  AND status = 'active'
  AND (expires_ms IS NULL OR expires_ms > @nowMs)
  AND total_tokens - used_tokens >= @tokens
  AND (daily_cap IS NULL OR (CASE WHEN day_key IS @dayKey THEN day_used ELSE 0 END) + @tokens <= daily_cap)
  AND (weekly_cap IS NULL OR (CASE WHEN week_key IS @weekKey THEN week_used ELSE 0 END) + @tokens <= weekly_cap)
RETURNING ${GRANT_COLUMNS}`;

// Tokens go back to a cap window only while it is still the grant's current one.
const REFUND_SQL = `
UPDATE grants SET
  used_tokens = used_tokens - @tokens,
  day_used = CASE WHEN day_key = @dayKey THEN max(0, day_used - @tokens) ELSE day_used END,
  week_used = CASE WHEN week_key = @weekKey THEN max(0, week_used - @tokens) ELSE week_used END
WHERE id = @grantId`;

function grantParams(grant: Grant): Record<string, string | number | null> {
  return {
    id: grant.id,
    accountId: grant.accountId,
    plan: grant.plan,
    totalTokens: grant.totalTokens,
    usedTokens: grant.usedTokens,
    dailyCap: grant.dailyCap,
    weeklyCap: grant.weeklyCap,
    dayKey: grant.dayKey,
    dayUsed: grant.dayUsed,
    weekKey: grant.weekKey,
    weekUsed: grant.weekUsed,
    expiresAt: grant.expiresAt,
    expiresMs: expiresAtMs(grant.expiresAt),
    isGift: grant.isGift ? 1 : 0,
    engines: JSON.stringify(grant.engines),
    status: grant.status,
    createdAt: grant.createdAt,
  };
}

export function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/*
 * Moves with every grant write through a handle: the active-grants cache of
 * `listActive` compares it (and `PRAGMA data_version` for other handles).
 * Shared per handle, so a charge written by the jobs store invalidates too.
 */
const grantGenerations = new WeakMap<EmbeddedDb, { n: number }>();

function grantGeneration(db: EmbeddedDb): { n: number } {
  let generation = grantGenerations.get(db);
  if (!generation) grantGenerations.set(db, (generation = { n: 0 }));
  return generation;
}

/** Applies a checked charge command; call inside a transaction. */
export type SqliteCharger = (cmd: ChargeCommand, nowMs: number) => Grant | null;

/**
 * The conditional charge, its outbox row and its hold (when the command asks
 * for one), for use inside a caller's transaction (the grants store, and the
 * jobs store's submissions). An entry id already in the outbox throws
 * (unique), rolling the caller back.
 */
export function createSqliteCharger(db: EmbeddedDb): SqliteCharger {
  const chargeGrant = db.prepare(CHARGE_SQL);
  const insertOutbox = db.prepare(`INSERT INTO ledger_outbox ${ENTRY_INSERT}`);
  const insertHold = db.prepare('INSERT INTO charge_holds (charge_id, instance) VALUES (?, ?)');
  const generation = grantGeneration(db);
  return (cmd, nowMs) => {
    generation.n++;
    const row = chargeGrant.get({ grantId: cmd.grantId, tokens: cmd.tokens, dayKey: cmd.dayKey, weekKey: cmd.weekKey, nowMs }) as GrantRow | undefined;
    if (!row) return null;
    insertOutbox.run(entryParams(chargeEntry(cmd)));
    if (cmd.holdFor) insertHold.run(cmd.entry.id, cmd.holdFor);
    return toGrant(row);
  };
}

export function readSqliteGrant(db: EmbeddedDb): (id: string) => Grant | null {
  const selectOne = db.prepare(`SELECT ${GRANT_COLUMNS} FROM grants WHERE id = ?`);
  return (id) => {
    const row = selectOne.get(id) as GrantRow | undefined;
    return row ? toGrant(row) : null;
  };
}

export function createSqliteGrants(db: EmbeddedDb): GrantsStore {
  const insert = db.prepare(`
    INSERT INTO grants (id, account_id, plan, total_tokens, used_tokens, daily_cap, weekly_cap,
      day_key, day_used, week_key, week_used, expires_at, expires_ms, is_gift, engines, status, created_at)
    VALUES (@id, @accountId, @plan, @totalTokens, @usedTokens, @dailyCap, @weeklyCap,
      @dayKey, @dayUsed, @weekKey, @weekUsed, @expiresAt, @expiresMs, @isGift, @engines, @status, @createdAt)`);
  const selectActive = db.prepare(
    `SELECT ${GRANT_COLUMNS} FROM grants WHERE account_id = ? AND status = 'active' ORDER BY created_at, rowid`,
  );
  const selectAll = db.prepare(`SELECT ${GRANT_COLUMNS} FROM grants WHERE account_id = ? ORDER BY created_at, rowid`);
  const selectPage = db.prepare(`SELECT ${GRANT_COLUMNS} FROM grants WHERE id > ? ORDER BY id LIMIT ?`);
  const updateStatus = db.prepare('UPDATE grants SET status = ? WHERE id = ?');
  const refundGrant = db.prepare(REFUND_SQL);
  const insertOutbox = db.prepare(`INSERT INTO ledger_outbox ${ENTRY_INSERT}`);
  const selectRefundOf = db.prepare(`SELECT 1 FROM ledger_outbox WHERE kind = 'refund' AND charge_id = ?`);
  // A refund names its charge by the charge entry's id or by the chargeId the charge carried.
  const selectChargeTokens = db.prepare(
    `SELECT tokens FROM ledger_outbox WHERE kind = 'charge' AND grant_id = @grantId
       AND (id = @chargeId OR charge_id = @chargeId) ORDER BY seq LIMIT 1`,
  );

  const read = readSqliteGrant(db);
  const writes = groupCommit(db);
  const chargeTx = db.transaction(createSqliteCharger(db));

  const refundTx = db.transaction((cmd: RefundCommand): boolean => {
    const { entry } = cmd;
    if (selectRefundOf.get(entry.chargeId)) return false;
    const grant = read(cmd.grantId);
    if (!grant) return false;
    const charged = selectChargeTokens.get({ grantId: cmd.grantId, chargeId: entry.chargeId }) as
      | { tokens: number }
      | undefined;
    const tokens = Math.min(cmd.tokens, charged?.tokens ?? cmd.tokens, grant.usedTokens);
    if (tokens <= 0) return false;
    refundGrant.run({ grantId: cmd.grantId, tokens, dayKey: entry.dayKey ?? null, weekKey: entry.weekKey ?? null });
    insertOutbox.run(entryParams({ ...entry, tokens }));
    return true;
  });

  // Active grants are read on every charge and balance call. They are cached
  // per account and revalidated cheaply: the generation moves with every grant
  // write through this handle, `PRAGMA data_version` with every commit by
  // another connection to the file (another process, the admin CLI). The
  // pragma is asked at most every VERSION_RECHECK_MS rather than on every
  // call, so another process's grant write is seen within that time; a
  // charge decided on a stale list is still the conditional UPDATE above.
  const dataVersion = db.prepare('PRAGMA data_version').pluck();
  let versionSeen: unknown = null;
  let versionAt = -Infinity;
  const currentVersion = (): unknown => {
    const now = performance.now();
    if (now - versionAt >= VERSION_RECHECK_MS) {
      versionSeen = dataVersion.get();
      versionAt = now;
    }
    return versionSeen;
  };
  const generation = grantGeneration(db);
  const activeCache = new Map<string, { version: unknown; generation: number; grants: Grant[] }>();
  const wrote = <T>(result: T): T => {
    generation.n++;
    return result;
  };

  return {
    async create(grant) {
      wrote(insert.run(grantParams(grant)));
      return { ...grant, engines: [...grant.engines] };
    },
    async get(id) {
      return read(id);
    },
    async listActive(accountId) {
      const version = currentVersion();
      const hit = activeCache.get(accountId);
      if (hit && hit.version === version && hit.generation === generation.n) return hit.grants.map((g) => ({ ...g }));
      const grants = (selectActive.all(accountId) as GrantRow[]).map(toGrant);
      if (activeCache.size >= 10_000) activeCache.clear();
      activeCache.set(accountId, { version, generation: generation.n, grants });
      return grants.map((g) => ({ ...g }));
    },
    async listByAccount(accountId) {
      return (selectAll.all(accountId) as GrantRow[]).map(toGrant);
    },
    async listPage(afterId, limit) {
      if (limit <= 0) return [];
      return (selectPage.all(afterId ?? '', limit) as GrantRow[]).map(toGrant);
    },
    async setStatus(id: string, status: GrantStatus) {
      wrote(updateStatus.run(status, id));
    },
    async charge(cmd): Promise<ChargeWriteResult> {
      const nowMs = checkCharge(cmd);
      try {
        const grant = await writes.run(() => chargeTx(cmd, nowMs));
        if (grant) return { ok: true, grant };
      } catch (err) {
        // An entry id already in the outbox rolls the grant update back with it.
        if (!isUniqueViolation(err)) throw err;
      }
      return { ok: false, grant: read(cmd.grantId) };
    },
    async refund(cmd) {
      checkRefund(cmd);
      return { applied: await writes.run(() => wrote(refundTx(cmd))) };
    },
  };
}

/** Holds and beats on the embedded file; a hold's charge entry is the outbox row, kept after publication. */
export function createSqliteHolds(db: EmbeddedDb): HoldsStore {
  const remove = db.prepare('DELETE FROM charge_holds WHERE charge_id = ?');
  const removeAll = db.transaction((ids: string[]) => {
    for (const id of ids) remove.run(id);
  });
  const upsertBeat = db.prepare(
    'INSERT INTO process_beats (instance, until_ms) VALUES (?, ?) ON CONFLICT (instance) DO UPDATE SET until_ms = excluded.until_ms',
  );
  // A process gone a day is forgotten: its holds, if any, are orphans either way.
  const pruneBeats = db.prepare('DELETE FROM process_beats WHERE until_ms < ?');
  const selectOrphaned = db.prepare(`
    SELECT ${ENTRY_COLUMNS} FROM ledger_outbox WHERE id IN (
      SELECT charge_id FROM charge_holds h
      WHERE NOT EXISTS (SELECT 1 FROM process_beats b WHERE b.instance = h.instance AND b.until_ms > @nowMs))
    ORDER BY seq LIMIT @limit`);
  const writes = groupCommit(db);
  return {
    async release(holds) {
      // Shares the commit of the requests being answered meanwhile.
      if (holds.length > 0) await writes.run(() => removeAll(holds.map((h) => h.chargeId)));
    },
    async beat(instance, untilMs) {
      await writes.run(() => {
        upsertBeat.run(instance, Math.floor(untilMs));
        pruneBeats.run(Math.floor(untilMs) - BEATS_KEPT_MS);
      });
    },
    async orphaned(nowMs, limit) {
      if (limit <= 0) return [];
      return selectOrphaned.all({ nowMs: Math.floor(nowMs), limit }).map(toEntry);
    },
  };
}

export function createSqliteOutbox(db: EmbeddedDb): OutboxStore {
  const selectPending = db.prepare(`SELECT ${ENTRY_COLUMNS} FROM ledger_outbox WHERE published = 0 ORDER BY seq LIMIT ?`);
  const publish = db.prepare('UPDATE ledger_outbox SET published = 1 WHERE id = ?');
  // Published rows stay: they are how a late refund finds the size of its charge.
  const publishAll = db.transaction((ids: string[]) => {
    for (const id of ids) publish.run(id);
  });
  const writes = groupCommit(db);
  return {
    async pending(limit) {
      return selectPending.all(limit).map(toEntry);
    },
    async markPublished(ids) {
      // Shares the commit of the requests being accepted meanwhile.
      if (ids.length > 0) await writes.run(() => publishAll(ids));
    },
  };
}

export function createSqliteLedger(db: EmbeddedDb): LedgerStore {
  // ON CONFLICT(id) rather than INSERT OR IGNORE, which would also swallow a malformed entry.
  const append = db.prepare(`INSERT INTO ledger ${ENTRY_INSERT} ON CONFLICT (id) DO NOTHING`);
  const sum = db.prepare(`
    SELECT COALESCE(SUM(CASE WHEN kind = 'charge' THEN tokens END), 0) AS charged,
           COALESCE(SUM(CASE WHEN kind = 'refund' THEN tokens END), 0) AS refunded,
           COUNT(*) AS entries
    FROM ledger WHERE grant_id = @grantId AND at >= @from AND at < @to
      AND route NOT IN (SELECT value FROM json_each(@exceptRoutes))`);
  const list = db.prepare(`SELECT ${ENTRY_COLUMNS} FROM ledger WHERE grant_id = ? ORDER BY at, rowid`);
  const writes = groupCommit(db);
  return {
    async append(entry: LedgerEntry) {
      return writes.run(() => append.run(entryParams(entry)).changes === 1);
    },
    async sumByGrant(grantId, window) {
      // Entry times are ISO 8601 strings of one format, so they compare as text; '~' sorts after every digit.
      return sum.get({ grantId, from: window?.from ?? '', to: window?.to ?? '~', exceptRoutes: JSON.stringify(window?.exceptRoutes ?? []) }) as {
        charged: number; refunded: number; entries: number;
      };
    },
    async listByGrant(grantId) {
      return list.all(grantId).map(toEntry);
    },
  };
}
