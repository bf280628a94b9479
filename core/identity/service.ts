import { createHmac, randomBytes, randomUUID, timingSafeEqual, hash } from 'node:crypto';
import type { IdentityStore, SessionRecord, UserRecord } from '../ports/identity.ts';
import type { RateLimiter } from '../ports/counters.ts';
import { DomainError } from '../errors.ts';
import { decoyHash, hashPassword, verifyPassword } from './passwords.ts';

/**
 * Sign-in of people, shared by every feature with a sign-in page (the OAuth
 * authorization server, the web console): users with an e-mail and a
 * memory-hard password hash, sign-in sessions behind an opaque cookie value,
 * rate limits and lockout on failed sign-ins, CSRF tokens for forms.
 */

export interface IdentitySettings {
  sessionSecret: string;
  sessionTtlHours: number;
  maxFailures: number;
  lockoutMinutes: number;
  signInsPerMinute: number;
}

/** A user as shown outside the store: never the hash. */
export interface PublicUser {
  id: string;
  accountId: string;
  email: string;
  name: string | null;
  createdAt: string;
}

export interface SignedIn {
  user: PublicUser;
  session: SessionRecord;
  /** the cookie value; only its hash is stored */
  token: string;
}

export interface IdentityService {
  createUser(input: { accountId: string; email: string; password?: string | null; name?: string | null }): Promise<PublicUser>;
  /** e-mail and password; `client` (the caller's address) and the e-mail are rate limited separately */
  signIn(input: { email: string; password: string; client: string }): Promise<SignedIn>;
  /** a session for a user proven another way (an upstream OpenID provider) */
  startSession(userId: string, method: string): Promise<SignedIn>;
  /** the live session a cookie value stands for, with its user */
  session(token: string | null | undefined): Promise<{ session: SessionRecord; user: PublicUser } | null>;
  /** the same by the session's id (what a credential derived from a session names: never the cookie value) */
  sessionById(sessionId: string): Promise<{ session: SessionRecord; user: PublicUser } | null>;
  signOut(token: string | null | undefined): Promise<void>;
  findUserByEmail(email: string): Promise<PublicUser | null>;
  getUser(id: string): Promise<PublicUser | null>;
  listUsers(accountId: string): Promise<PublicUser[]>;
  /** a CSRF token bound to `binding` (a session id, or a pre-session nonce) */
  csrfToken(binding: string): string;
  checkCsrf(binding: string, token: string | null | undefined): boolean;
}

export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 200;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const isEmailAddress = (email: string) => EMAIL.test(email) && email.length <= 254;

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

const sessionIdOf = (token: string) => hash('sha256', token);
const publicUser = (u: UserRecord): PublicUser => ({ id: u.id, accountId: u.accountId, email: u.email, name: u.name, createdAt: u.createdAt });
const wrongCredentials = () => new DomainError('unauthenticated', 'The e-mail or password is not right.', { code: 'SIGN_IN_FAILED' });
/** Told to the second: the lock end of an e-mail no user has is worked out anew on each attempt, a few ms apart. */
function locked(untilMs: number, nowMs: number): DomainError {
  const until = Math.ceil(untilMs / 1000) * 1000;
  return new DomainError('limited', `Too many failed sign-ins: this user is locked until ${new Date(until).toISOString()}.`, {
    code: 'SIGN_IN_LOCKED', retryAfterSeconds: Math.max(1, Math.ceil((until - nowMs) / 1000)),
  });
}
/** How long the failed sign-ins of an e-mail no user has are counted. */
const UNKNOWN_FAILURES_KEPT_SECONDS = 86_400;

export function createIdentityService(deps: {
  store: IdentityStore;
  rateLimiter: RateLimiter;
  accountExists(accountId: string): Promise<boolean>;
  settings: IdentitySettings;
  clock?: () => Date;
}): IdentityService {
  const { store, settings } = deps;
  const clock = deps.clock ?? (() => new Date());
  const csrfKey = createHmac('sha256', settings.sessionSecret).update('csrf').digest();
  const lockoutSeconds = Math.max(1, Math.ceil(settings.lockoutMinutes * 60));

  async function limit(key: string): Promise<void> {
    const decision = await deps.rateLimiter.consume(key, settings.signInsPerMinute, 60);
    if (!decision.allowed) {
      const retryAfterSeconds = Math.max(1, Math.ceil(decision.resetMs / 1000));
      throw new DomainError('limited', `Too many sign-in attempts. Try again in ${retryAfterSeconds} seconds.`, { code: 'SIGN_IN_RATE_LIMITED', retryAfterSeconds });
    }
  }

  async function openSession(user: UserRecord, method: string): Promise<SignedIn> {
    const token = randomBytes(32).toString('base64url');
    const now = clock();
    const session: SessionRecord = {
      id: sessionIdOf(token), userId: user.id, accountId: user.accountId, method, createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + settings.sessionTtlHours * 3600_000).toISOString(), revokedAt: null,
    };
    await store.sessions.create(session);
    return { user: publicUser(user), session, token };
  }

  async function liveSession(id: string): Promise<{ session: SessionRecord; user: PublicUser } | null> {
    const session = await store.sessions.getLive(id, clock().toISOString());
    if (!session) return null;
    const user = await store.users.get(session.userId);
    if (!user || user.disabledAt) return null;
    return { session, user: publicUser(user) };
  }

  return {
    async createUser(input) {
      const email = normaliseEmail(input.email);
      if (!isEmailAddress(email)) throw new DomainError('invalid', '"email" must be a valid e-mail address.', { param: 'email' });
      const password = input.password ?? null;
      if (password !== null && (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX)) {
        throw new DomainError('invalid', `"password" must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters long.`, { param: 'password' });
      }
      if (!(await deps.accountExists(input.accountId))) throw new DomainError('not_found', `Account ${input.accountId} not found.`, { code: 'ACCOUNT_NOT_FOUND' });
      const user: UserRecord = {
        id: 'usr_' + randomUUID(), accountId: input.accountId, email, name: input.name ?? null,
        passwordHash: password === null ? null : await hashPassword(password),
        failedSignIns: 0, lockedUntil: null, createdAt: clock().toISOString(), disabledAt: null,
      };
      if (!(await store.users.create(user))) throw new DomainError('conflict', `A user with e-mail ${email} already exists.`, { code: 'USER_EXISTS', param: 'email' });
      return publicUser(user);
    },

    async signIn({ email: given, password, client }) {
      const email = normaliseEmail(given);
      await limit(`signin:client:${client}`);
      await limit(`signin:email:${hash('sha256', email, 'base64url')}`);
      const user = await store.users.findByEmail(email);
      const now = clock();
      if (user?.lockedUntil && Date.parse(user.lockedUntil) > now.getTime()) {
        // A hash all the same: a locked user answers no faster than an unknown e-mail does.
        await verifyPassword(password, await decoyHash());
        throw locked(Date.parse(user.lockedUntil), now.getTime());
      }
      // Unknown users cost one hash too, so the answer's timing does not tell which e-mails exist.
      const matches = await verifyPassword(password, user?.passwordHash ?? (await decoyHash()));
      if (!user || !user.passwordHash || !matches || user.disabledAt) {
        if (user) {
          const lockUntil = new Date(now.getTime() + settings.lockoutMinutes * 60_000).toISOString();
          const state = await store.users.recordFailure(user.id, settings.maxFailures, lockUntil);
          if (state?.lockedUntil === lockUntil) throw locked(Date.parse(lockUntil), now.getTime());
        } else if (isEmailAddress(email)) {
          // Nor does the lockout: an e-mail no user has is locked after as many failures, for as long, from the
          // failure that locks it (counted for a day, where a user's count lasts until a success). Only what could
          // be a user's e-mail is counted, under its hash: a counter per arbitrary 16 KB string would grow without end.
          const key = `signin:unknown:${hash('sha256', email, 'base64url')}`;
          const decision = await deps.rateLimiter.consume(key, settings.maxFailures - 1, UNKNOWN_FAILURES_KEPT_SECONDS, lockoutSeconds);
          if (!decision.allowed) throw locked(now.getTime() + decision.resetMs, now.getTime());
        }
        throw wrongCredentials();
      }
      if (user.failedSignIns > 0 || user.lockedUntil) await store.users.recordSuccess(user.id);
      return openSession(user, 'password');
    },

    async startSession(userId, method) {
      const user = await store.users.get(userId);
      if (!user || user.disabledAt) throw wrongCredentials();
      return openSession(user, method);
    },

    async session(token) {
      if (!token || token.length > 100) return null;
      return liveSession(sessionIdOf(token));
    },
    sessionById: (sessionId) => liveSession(sessionId),

    async signOut(token) {
      if (token) await store.sessions.revoke(sessionIdOf(token), clock().toISOString());
    },

    async findUserByEmail(email) {
      const user = await store.users.findByEmail(normaliseEmail(email));
      return user && !user.disabledAt ? publicUser(user) : null;
    },
    async getUser(id) {
      const user = await store.users.get(id);
      return user && !user.disabledAt ? publicUser(user) : null;
    },
    async listUsers(accountId) {
      return (await store.users.listByAccount(accountId)).map(publicUser);
    },

    csrfToken(binding) {
      return createHmac('sha256', csrfKey).update(binding).digest('base64url');
    },
    checkCsrf(binding, token) {
      if (!token) return false;
      const expected = Buffer.from(createHmac('sha256', csrfKey).update(binding).digest('base64url'));
      const given = Buffer.from(token);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}
