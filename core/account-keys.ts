import { randomBytes, randomUUID } from 'node:crypto';
import type { ApiKeyRecord, Documents, Grant, KeyKind } from './ports/documents.ts';
import { DomainError } from './errors.ts';
import { hashKey } from './http/auth.ts';
import { isExpired } from './billing/assessment.ts';

/**
 * An account's keys and its trial, with SPEC's rules ("API key and grant"):
 * at most 5 active keys, a key only against an active grant, plaintext shown
 * once, a free 7-day trial once per account. One implementation for every
 * way in: the admin CLI and API, and the signed-in user's web console.
 */
export const MAX_ACTIVE_KEYS = 5;
export const TRIAL = { plan: 'trial', totalTokens: 20_000, dailyCap: 10_000, weeklyCap: null, days: 7 } as const;
const KEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export interface GrantInput {
  plan?: string;
  totalTokens: number;
  dailyCap?: number | null;
  weeklyCap?: number | null;
  expiresAt?: string | null;
  expiresInDays?: number | null;
  isGift?: boolean;
  engines?: string[];
}

/** A key as listings show it: never the hash. */
export interface PublicKey {
  id: string;
  prefix: string;
  kind: KeyKind;
  name: string | null;
  grantId: string;
  createdAt: string;
  revokedAt: string | null;
  /** the last request made with it, to within a minute; null when never used */
  lastUsedAt: string | null;
}

function generateKey(kind: KeyKind): string {
  const bytes = randomBytes(32);
  let body = '';
  for (const b of bytes) body += KEY_ALPHABET[b % KEY_ALPHABET.length];
  return (kind === 'live' ? 'vn_sk_' : 'vn_test_') + body;
}

export function publicKey(k: ApiKeyRecord): PublicKey {
  return { id: k.id, prefix: k.prefix, kind: k.kind, name: k.name, grantId: k.grantId, createdAt: k.createdAt, revokedAt: k.revokedAt, lastUsedAt: k.lastUsedAt ?? null };
}

/** A new active grant record (not yet stored); gifts have no caps and never expire. */
export function newGrant(accountId: string, input: GrantInput, now: Date): Grant {
  const isGift = input.isGift ?? false;
  const expiresAt = isGift ? null : input.expiresAt ?? (input.expiresInDays ? new Date(now.getTime() + input.expiresInDays * 86_400_000).toISOString() : null);
  return {
    id: 'grt_' + randomUUID(),
    accountId,
    plan: input.plan ?? (isGift ? 'gift' : 'standard'),
    totalTokens: input.totalTokens,
    usedTokens: 0,
    dailyCap: isGift ? null : input.dailyCap ?? null,
    weeklyCap: isGift ? null : input.weeklyCap ?? null,
    dayKey: null,
    dayUsed: 0,
    weekKey: null,
    weekUsed: 0,
    expiresAt,
    isGift,
    engines: input.engines ?? ['v4'],
    status: 'active',
    createdAt: now.toISOString(),
  };
}

export interface AccountKeys {
  /** issues a key against `grantId` (or the newest active grant); the plaintext is in the answer only */
  issueKey(accountId: string, input: { kind?: KeyKind; grantId?: string | null; name?: string | null }): Promise<{ apiKey: string; key: PublicKey }>;
  listKeys(accountId: string): Promise<PublicKey[]>;
  /** revokes a key; with `accountId`, a key of another account is not found */
  revokeKey(keyId: string, accountId?: string): Promise<PublicKey>;
  /** the free 7-day trial grant, once per account */
  startTrial(accountId: string): Promise<Grant>;
}

export function createAccountKeys(deps: { documents: Documents; clock?: () => Date }): AccountKeys {
  const clock = deps.clock ?? (() => new Date());
  const { documents } = deps;

  return {
    async issueKey(accountId, input) {
      const now = clock();
      const active = (await documents.grants.listActive(accountId)).filter((g) => !isExpired(g, now));
      const grant = input.grantId ? active.find((g) => g.id === input.grantId) : active[active.length - 1];
      if (!grant) {
        throw new DomainError('forbidden', input.grantId ? `No active grant was found with id ${input.grantId} for this account.` : 'No active grant was found for this account. Start a trial or buy a plan first.', { code: 'NO_ACTIVE_GRANT' });
      }
      if ((await documents.keys.countActive(accountId)) >= MAX_ACTIVE_KEYS) {
        throw new DomainError('invalid', `An account can hold at most ${MAX_ACTIVE_KEYS} active keys. Revoke one first.`, { code: 'KEY_LIMIT_REACHED' });
      }
      const kind = input.kind ?? 'live';
      const apiKey = generateKey(kind);
      const record = await documents.keys.create({
        id: 'key_' + randomUUID(),
        accountId,
        grantId: grant.id,
        kind,
        hash: hashKey(apiKey),
        prefix: apiKey.slice(0, kind === 'live' ? 10 : 12),
        name: input.name ?? null,
        createdAt: now.toISOString(),
        revokedAt: null,
      });
      return { apiKey, key: publicKey(record) };
    },

    async listKeys(accountId) {
      return (await documents.keys.listByAccount(accountId)).map(publicKey);
    },

    async revokeKey(keyId, accountId) {
      const key = await documents.keys.get(keyId);
      if (!key || (accountId !== undefined && key.accountId !== accountId)) throw new DomainError('not_found', `Key ${keyId} not found.`, { code: 'KEY_NOT_FOUND' });
      const at = clock().toISOString();
      await documents.keys.revoke(keyId, at);
      return publicKey({ ...key, revokedAt: key.revokedAt ?? at });
    },

    async startTrial(accountId) {
      if (!(await documents.accounts.claimTrial(accountId))) {
        throw new DomainError('conflict', 'The free 7-day trial has already been used by this account.', { code: 'TRIAL_ALREADY_USED' });
      }
      return documents.grants.create(newGrant(accountId, { plan: TRIAL.plan, totalTokens: TRIAL.totalTokens, dailyCap: TRIAL.dailyCap, weeklyCap: TRIAL.weeklyCap, expiresInDays: TRIAL.days }, clock()));
    },
  };
}
