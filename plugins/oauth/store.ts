/**
 * The authorization server's storage port: the records oidc-provider keeps
 * (clients, grants, sessions, interactions, codes, tokens), each a JSON
 * payload under (model, id) with an optional expiry, indexed the ways the
 * library and the connected-apps page look them up. Adapters:
 * store-sqlite.ts and store-mongo.ts on the plugin's own database namespace.
 */

export interface OAuthRecord {
  model: string;
  id: string;
  payload: Record<string, unknown>;
  /** epoch ms; null never expires */
  expiresAt: number | null;
}

export interface OAuthStore {
  upsert(record: OAuthRecord): Promise<void>;
  /** inserts only when absent; returns the stored payload (the new one or the one already there) */
  insertIfAbsent(record: OAuthRecord): Promise<Record<string, unknown>>;
  /** the payload while not expired at `now`, with `consumed` when it was consumed */
  find(model: string, id: string, now: number): Promise<Record<string, unknown> | null>;
  findByUid(model: string, uid: string, now: number): Promise<Record<string, unknown> | null>;
  findByUserCode(model: string, userCode: string, now: number): Promise<Record<string, unknown> | null>;
  /** marks a one-time record used (epoch seconds) */
  consume(model: string, id: string, atSeconds: number): Promise<void>;
  destroy(model: string, id: string): Promise<void>;
  /** deletes every record of `model` issued under the grant */
  revokeByGrantId(model: string, grantId: string): Promise<void>;
  /** live records of `model` whose payload names `accountId` (the grants behind the connected-apps page) */
  listByAccount(model: string, accountId: string, now: number): Promise<Array<{ id: string; payload: Record<string, unknown> }>>;
  /** drops what expired before `now`; returns how many */
  purgeExpired(now: number): Promise<number>;
}

/** The indexed fields of a payload. */
export function indexedFields(payload: Record<string, unknown>): { grantId: string | null; uid: string | null; userCode: string | null; accountId: string | null } {
  const text = (v: unknown) => (typeof v === 'string' ? v : null);
  return { grantId: text(payload.grantId), uid: text(payload.uid), userCode: text(payload.userCode), accountId: text(payload.accountId) };
}
