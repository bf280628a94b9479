import { hash } from 'node:crypto';
import type { Documents, KeyKind } from '../ports/documents.ts';
import { ApiError } from '../errors.ts';

const unauthorized = (message: string) => new ApiError(401, message);

/** Who the request acts for, once its key (or another credential) is verified. */
export interface AuthContext {
  /** the API key's id; for another credential, the id its verifier gives it (rate limits, usage `scope=key`, idempotency) */
  keyId: string;
  accountId: string;
  /** the grant that pays first (a key's own grant) */
  grantId: string;
  keyKind: KeyKind;
  /** which verifier accepted the credential: `api_key` (absent means the same) or a plugin's verifier name */
  via?: string;
  /**
   * the signed-in person the credential stands for, when it is a person's
   * sign-in (a console session) rather than an API key: routes marked
   * `stream` allow STREAMS_PER_USER open streams per person (SPEC Limits)
   */
  userId?: string;
}

/**
 * A credential other than an API key, verified by the feature that issues it
 * (e.g. OAuth access tokens of the authorization server). Core consults the
 * registered verifiers for every bearer token that is not shaped like a key.
 */
export interface CredentialVerifier {
  name: string;
  /** true when the token has this verifier's shape; only then is `verify` asked */
  accepts(token: string): boolean;
  /** the caller it stands for; throws a 401 (DomainError 'unauthenticated') when it is not valid */
  verify(token: string): Promise<AuthContext>;
}

const KEY_PATTERN = /^(vn_sk_|vn_test_)[A-Za-z0-9]{32}$/;

export function hashKey(plaintext: string): string {
  return hash('sha256', plaintext);
}

export function isWellFormedKey(value: string): boolean {
  return KEY_PATTERN.test(value);
}

/** Names the headers this request sent its key in, so the caller sees which clash (X-AGENT-SECRET too, on a route that takes it). */
function ambiguousMessage(headers: Array<{ name: string; sent: number }>): string {
  const clash = headers.filter((h) => h.sent > 0).map((h) => (h.sent > 1 ? `${h.name} ${h.sent} times` : h.name));
  const names = headers.map((h) => (h.name === 'Authorization' ? 'Authorization: Bearer' : h.name));
  return `Send the API key in one header only, once: this request sent ${clash.join(' and ')}. Use ${names.slice(0, -1).join(', ')} or ${names.at(-1)}.`;
}

/**
 * Reads the key from `Authorization: Bearer` or `X-API-Key` (or a route's
 * extra header such as `X-AGENT-SECRET`). Sending more than one is 400:
 * the service will not guess which one the caller meant. That includes one
 * header sent twice, so it takes the request's headers as Node keeps them
 * all (`headersDistinct`): `headers` holds only the first `Authorization`,
 * and a proxy that authorised the last would act for another tenant.
 */
export function readPresentedKey(headers: NodeJS.Dict<string[]>, extraHeader?: string): string | null {
  const sent = (name: string) => (headers[name] ?? []).filter((value) => value.length > 0);
  const authorization = sent('authorization');
  const apiKey = sent('x-api-key');
  const extra = extraHeader ? sent(extraHeader.toLowerCase()) : [];
  if (authorization.length + apiKey.length + extra.length > 1) {
    const offered = [{ name: 'Authorization', sent: authorization.length }, { name: 'X-API-Key', sent: apiKey.length }];
    if (extraHeader) offered.push({ name: extraHeader.toUpperCase(), sent: extra.length });
    throw new ApiError(400, ambiguousMessage(offered), {
      code: 'AMBIGUOUS_CREDENTIALS', compatType: 'invalid_request_error',
    });
  }
  if (authorization.length > 0) {
    const match = /^Bearer\s+(.+)$/i.exec(authorization[0].trim());
    if (!match) throw unauthorized('Authorization header must be "Bearer <API_KEY>".');
    return match[1].trim();
  }
  return (apiKey[0] ?? extra[0])?.trim() ?? null;
}

export interface KeyAuthenticator {
  authenticate(plaintext: string): Promise<AuthContext>;
  /** drops a key from the cache at once (revocation in this process) */
  forget(keyId: string): void;
}

const CACHE_MAX = 50_000;
/** A key's last use is written at most this often per key and process: listings show it to within a minute. */
export const LAST_USE_INTERVAL_MS = 60_000;

/**
 * Verifies keys against the documents port with a short cache of valid keys:
 * a hot key is hashed and looked up once per `ttlMs` instead of on every
 * request. Revocation through this process takes effect at once; through
 * another process within `ttlMs`. Unknown keys are never cached. A bearer
 * token that is not shaped like a key goes to the registered credential
 * verifiers (plugins register them with `authenticator(...)`). Each key's
 * last use is recorded in the background, at most once a minute per key.
 */
export function createKeyAuthenticator(documents: Documents, ttlMs = 2000, verifiers: () => CredentialVerifier[] = () => []): KeyAuthenticator {
  const cache = new Map<string, { auth: AuthContext; expires: number }>();
  const lastWritten = new Map<string, number>();
  // Off the request's path: a failed write only means the next use tries again.
  const recordUse = (keyId: string, now: number) => {
    if (now - (lastWritten.get(keyId) ?? -Infinity) < LAST_USE_INTERVAL_MS) return;
    if (lastWritten.size >= CACHE_MAX) lastWritten.clear();
    lastWritten.set(keyId, now);
    // After this request's own work: the embedded store writes synchronously.
    setImmediate(() => void documents.keys.touch(keyId, new Date(now).toISOString()).catch(() => lastWritten.delete(keyId)));
  };
  return {
    async authenticate(plaintext) {
      if (!isWellFormedKey(plaintext)) {
        // Other credentials are checked by their issuer on every request (no cache), so revoking one takes effect at once.
        const verifier = verifiers().find((v) => v.accepts(plaintext));
        if (verifier) return { ...(await verifier.verify(plaintext)), via: verifier.name };
        throw unauthorized('Malformed API key.');
      }
      const now = Date.now();
      const hit = cache.get(plaintext);
      if (hit && hit.expires > now) {
        recordUse(hit.auth.keyId, now);
        return hit.auth;
      }
      const record = await documents.keys.findByHash(hashKey(plaintext));
      if (!record) throw unauthorized('Unknown API key.');
      if (record.revokedAt) {
        cache.delete(plaintext);
        throw unauthorized('This API key has been revoked.');
      }
      const auth: AuthContext = { keyId: record.id, accountId: record.accountId, grantId: record.grantId, keyKind: record.kind };
      if (ttlMs > 0) {
        if (cache.size >= CACHE_MAX) cache.clear();
        cache.set(plaintext, { auth, expires: now + ttlMs });
      }
      recordUse(record.id, now);
      return auth;
    },
    forget(keyId) {
      for (const [plaintext, entry] of cache) if (entry.auth.keyId === keyId) cache.delete(plaintext);
    },
  };
}
