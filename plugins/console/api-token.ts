import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AuthContext, CredentialVerifier } from '../../core/http/auth.ts';
import type { IdentityService } from '../../core/identity/service.ts';
import type { Documents } from '../../core/ports/documents.ts';
import { DomainError } from '../../core/errors.ts';

/**
 * How a console session becomes a credential for `/api/v1`: the console's
 * session route mints a short-lived bearer token naming the sign-in session
 * (its id, never the cookie value) and an expiry, signed with a key derived
 * from SESSION_SECRET. Core's authentication phase hands such tokens to this
 * verifier, which checks the signature and expiry and that the session is
 * still live on every request: signing out ends every token of the session
 * at once. The browser keeps the token in memory only.
 *
 * The caller is the signed-in user's account. `keyId` is `console_<userId>`
 * (one per person: rate limits, idempotency keys and usage `scope=key` key
 * on it; `via` is `console`), and `userId` is the person, so that the
 * per-signed-in-user stream limit of SPEC "Limits" counts the console's
 * streams with those of the person's OAuth apps. `grantId` is the account's oldest active grant covering the
 * default engine, the one an account-level payer is charged from first; an
 * account without one still reads (balance, usage, voices) and is refused by
 * billing when it tries to spend.
 */

export const TOKEN_PREFIX = 'vnc_';
const SHAPE = /^vnc_([A-Za-z0-9_-]{1,200})\.([A-Za-z0-9_-]{43})$/;

export interface ConsoleTokens {
  mint(sessionId: string, now?: Date): { token: string; expiresAt: string };
  /** the session id a well-signed, unexpired token names; null otherwise */
  read(token: string, now?: Date): string | null;
}

export function consoleTokens(sessionSecret: string, lifetimeMinutes: number): ConsoleTokens {
  const key = createHmac('sha256', sessionSecret).update('console-api-token').digest();
  const sign = (payload: string) => createHmac('sha256', key).update(payload).digest('base64url');
  return {
    mint(sessionId, now = new Date()) {
      const expires = Math.floor(now.getTime() / 1000) + lifetimeMinutes * 60;
      const payload = Buffer.from(`${sessionId}.${expires}`).toString('base64url');
      return { token: `${TOKEN_PREFIX}${payload}.${sign(payload)}`, expiresAt: new Date(expires * 1000).toISOString() };
    },
    read(token, now = new Date()) {
      const match = SHAPE.exec(token);
      if (!match) return null;
      const [, payload, signature] = match;
      const expected = Buffer.from(sign(payload));
      if (!timingSafeEqual(expected, Buffer.from(signature))) return null;
      const [sessionId, expires] = Buffer.from(payload, 'base64url').toString('utf8').split('.');
      if (!sessionId || !/^\d+$/.test(expires ?? '') || Number(expires) * 1000 <= now.getTime()) return null;
      return sessionId;
    },
  };
}

const invalid = (message: string) => new DomainError('unauthenticated', message, { code: 'CONSOLE_SESSION_ENDED' });

export function consoleVerifier(deps: { tokens: ConsoleTokens; identity: IdentityService; documents: Documents; defaultEngine: string }): CredentialVerifier {
  return {
    name: 'console',
    accepts: (token) => token.startsWith(TOKEN_PREFIX),
    async verify(token): Promise<AuthContext> {
      const sessionId = deps.tokens.read(token);
      if (!sessionId) throw invalid('The console token is malformed or expired. Reload the console.');
      const live = await deps.identity.sessionById(sessionId);
      if (!live) throw invalid('The console session has ended. Sign in again.');
      const now = Date.now();
      const payer = (await deps.documents.grants.listActive(live.user.accountId))
        .find((g) => g.engines.includes(deps.defaultEngine) && (!g.expiresAt || Date.parse(g.expiresAt) > now));
      return { keyId: `console_${live.user.id}`, accountId: live.user.accountId, grantId: payer?.id ?? '', keyKind: 'live', userId: live.user.id };
    },
  };
}
