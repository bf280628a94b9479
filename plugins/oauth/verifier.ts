import type Provider from 'oidc-provider';
import type { AuthContext, CredentialVerifier } from '../../core/http/auth.ts';
import type { IdentityService } from '../../core/identity/service.ts';
import type { Documents } from '../../core/ports/documents.ts';
import { DomainError } from '../../core/errors.ts';
import { SCOPE } from './provider.ts';

/**
 * OAuth access tokens as API credentials (core's authentication phase asks
 * this verifier for bearer tokens that are not API keys). Tokens are opaque
 * (256 random bits, 43 base64url characters) and looked up on every request,
 * so a disconnected app or a revoked grant is refused at once.
 *
 * The caller is account-level: `accountId` is the signed-in user's account;
 * `keyId` is `oauth_<grant id>`, one per connected app and user, so rate
 * limits, idempotency keys and usage `scope=key` work per connection as they
 * do per key; `grantId` is the account's oldest active grant that covers the
 * default engine (the one an account-level payer is charged from first), so
 * billing, balance and per-grant stream slots behave as for a key on that
 * grant; `userId` is the person who connected the app, so a token counts
 * against that person's open streams (SPEC: 2 per signed-in user) as well.
 * An account whose plans are all spent keeps its tokens, standing on its
 * newest grant (see `billedGrant`); one that never had a grant is refused (403).
 */

/**
 * The grant a token stands on, as a key stands on its own: the oldest active
 * one that covers the default engine; when none can pay, the newest grant the
 * account had (preferring one that covers the engine), so the token behaves
 * as a key on a spent plan does: `GET /balance`, `/usage` and the other
 * routes that spend nothing still answer, and spending routes refuse with
 * GRANT_INACTIVE. Null only for an account that never had a grant.
 */
async function billedGrant(documents: Documents, accountId: string, engine: string): Promise<string | null> {
  const now = Date.now();
  const active = await documents.grants.listActive(accountId);
  const payer = active.find((g) => g.engines.includes(engine) && (!g.expiresAt || Date.parse(g.expiresAt) > now));
  if (payer) return payer.id;
  const newestFirst = (await documents.grants.listByAccount(accountId)).sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  return (newestFirst.find((g) => g.engines.includes(engine)) ?? newestFirst[0])?.id ?? null;
}

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

const invalid = (message: string) => new DomainError('unauthenticated', message, { code: 'INVALID_TOKEN' });

export function oauthVerifier(deps: {
  provider: () => Promise<Provider>;
  identity: IdentityService;
  documents: Documents;
  audiences: () => string[];
  defaultEngine: string;
}): CredentialVerifier {
  return {
    name: 'oauth',
    accepts: (token) => TOKEN_SHAPE.test(token),
    async verify(token): Promise<AuthContext> {
      const provider = await deps.provider();
      const accessToken = await provider.AccessToken.find(token);
      if (!accessToken) throw invalid('The access token is unknown, expired or revoked. Sign in again (refresh the token).');
      const audiences = Array.isArray(accessToken.aud) ? accessToken.aud : [accessToken.aud];
      if (!audiences.some((a) => typeof a === 'string' && deps.audiences().includes(a))) throw invalid('The access token was issued for another resource.');
      if (!accessToken.scopes.has(SCOPE)) throw new DomainError('forbidden', `The access token lacks the "${SCOPE}" scope.`, { code: 'INSUFFICIENT_SCOPE' });
      const grant = accessToken.grantId ? await provider.Grant.find(accessToken.grantId) : undefined;
      if (!grant) throw invalid('This app was disconnected. Connect it again.');
      const user = await deps.identity.getUser(String(accessToken.accountId));
      if (!user) throw invalid('The user of this access token no longer exists.');
      const grantId = await billedGrant(deps.documents, user.accountId, deps.defaultEngine);
      if (!grantId) throw new DomainError('forbidden', 'This account has never had a plan. Add a plan to use the service.', { code: 'NO_ACTIVE_PLAN' });
      return { keyId: `oauth_${accessToken.grantId}`, accountId: user.accountId, grantId, keyKind: 'live', userId: user.id };
    },
  };
}
