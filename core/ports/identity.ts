/**
 * Identity port: the people who sign in (users of an account), their
 * sign-in sessions and the lockout counters of failed sign-ins. Part of the
 * system of record, shared by every sign-in feature (the OAuth authorization
 * server, the web console). Adapters: core/adapters/identity/sqlite.ts
 * (embedded) and core/adapters/identity/mongo.ts.
 */

export interface UserRecord {
  /** `usr_<uuid>` */
  id: string;
  accountId: string;
  /** lower-cased; unique across users */
  email: string;
  name: string | null;
  /** memory-hard hash (core/identity/passwords.ts); null for users who only sign in upstream */
  passwordHash: string | null;
  /** consecutive failed sign-ins since the last success */
  failedSignIns: number;
  /** while in the future, sign-in is refused */
  lockedUntil: string | null;
  createdAt: string;
  disabledAt: string | null;
}

export interface SessionRecord {
  /** SHA-256 (hex) of the cookie value; the value itself is never stored */
  id: string;
  userId: string;
  accountId: string;
  /** how the user signed in: `password` or `upstream:<issuer>` */
  method: string;
  createdAt: string;
  expiresAt: string;
  revokedAt: string | null;
}

/** What a failed sign-in left behind. */
export interface FailureState {
  failedSignIns: number;
  lockedUntil: string | null;
}

export interface UsersStore {
  /** false when the e-mail is already taken */
  create(user: UserRecord): Promise<boolean>;
  get(id: string): Promise<UserRecord | null>;
  findByEmail(email: string): Promise<UserRecord | null>;
  listByAccount(accountId: string): Promise<UserRecord[]>;
  /**
   * Counts one failed sign-in atomically; when the count reaches
   * `maxFailures` the user is locked until `lockUntil` and the count restarts.
   */
  recordFailure(id: string, maxFailures: number, lockUntil: string): Promise<FailureState | null>;
  /** a successful sign-in clears the count */
  recordSuccess(id: string): Promise<void>;
  setPasswordHash(id: string, hash: string): Promise<boolean>;
}

export interface SessionsStore {
  create(session: SessionRecord): Promise<void>;
  /** the session while it is neither expired (at `now`) nor revoked */
  getLive(id: string, now: string): Promise<SessionRecord | null>;
  revoke(id: string, at: string): Promise<boolean>;
  /** signs a user out everywhere; returns how many sessions ended */
  revokeByUser(userId: string, at: string): Promise<number>;
}

export interface IdentityStore {
  users: UsersStore;
  sessions: SessionsStore;
}
