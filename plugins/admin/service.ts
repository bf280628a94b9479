import { randomBytes, randomUUID } from 'node:crypto';
import type { Documents, Grant, KeyKind, ApiKeyRecord, ClonedVoice } from '../../core/ports/documents.ts';
import type { BillingService, BalanceView } from '../../core/billing/service.ts';
import { ApiError } from '../../core/errors.ts';
import { hashKey } from '../../core/http/auth.ts';
import { isExpired } from '../../core/billing/assessment.ts';

/**
 * Account administration (the web application is out of scope): accounts,
 * grants, trials, keys and test clones. Used by the admin CLI and the admin
 * HTTP API alike.
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

export interface PublicKey {
  id: string;
  prefix: string;
  kind: KeyKind;
  name: string | null;
  grantId: string;
  createdAt: string;
  revokedAt: string | null;
}

function generateKey(kind: KeyKind): string {
  const bytes = randomBytes(32);
  let body = '';
  for (const b of bytes) body += KEY_ALPHABET[b % KEY_ALPHABET.length];
  return (kind === 'live' ? 'vn_sk_' : 'vn_test_') + body;
}

export function publicKey(k: ApiKeyRecord): PublicKey {
  return { id: k.id, prefix: k.prefix, kind: k.kind, name: k.name, grantId: k.grantId, createdAt: k.createdAt, revokedAt: k.revokedAt };
}

export function createAdminService(deps: { documents: Documents; billing: BillingService; clock?: () => Date }) {
  const clock = deps.clock ?? (() => new Date());
  const { documents } = deps;

  async function requireAccount(accountId: string) {
    const account = await documents.accounts.get(accountId);
    if (!account) throw new ApiError(404, `Account ${accountId} not found.`, { code: 'ACCOUNT_NOT_FOUND' });
    return account;
  }

  async function createGrant(accountId: string, input: GrantInput): Promise<Grant> {
    await requireAccount(accountId);
    const now = clock();
    const isGift = input.isGift ?? false;
    const expiresAt = isGift ? null : input.expiresAt ?? (input.expiresInDays ? new Date(now.getTime() + input.expiresInDays * 86_400_000).toISOString() : null);
    return documents.grants.create({
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
    });
  }

  async function createKey(accountId: string, input: { kind?: KeyKind; grantId?: string | null; name?: string | null }): Promise<{ apiKey: string; key: PublicKey }> {
    await requireAccount(accountId);
    const now = clock();
    const active = (await documents.grants.listActive(accountId)).filter((g) => !isExpired(g, now));
    const grant = input.grantId ? active.find((g) => g.id === input.grantId) : active[active.length - 1];
    if (!grant) {
      throw new ApiError(403, input.grantId ? `No active grant was found with id ${input.grantId} for this account.` : 'No active grant was found for this account. Start a trial or buy a plan first.', { code: 'NO_ACTIVE_GRANT' });
    }
    if ((await documents.keys.countActive(accountId)) >= MAX_ACTIVE_KEYS) {
      throw new ApiError(400, `An account can hold at most ${MAX_ACTIVE_KEYS} active keys. Revoke one first.`, { code: 'KEY_LIMIT_REACHED' });
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
  }

  return {
    async createAccount(input: { name: string; email?: string | null }) {
      return documents.accounts.create({ id: 'acc_' + randomUUID(), name: input.name, email: input.email ?? null, createdAt: clock().toISOString() });
    },
    getAccount: requireAccount,
    createGrant,
    async startTrial(accountId: string): Promise<Grant> {
      await requireAccount(accountId);
      if (!(await documents.accounts.claimTrial(accountId))) {
        throw new ApiError(409, 'The free 7-day trial has already been used by this account.', { code: 'TRIAL_ALREADY_USED' });
      }
      return createGrant(accountId, { plan: TRIAL.plan, totalTokens: TRIAL.totalTokens, dailyCap: TRIAL.dailyCap, weeklyCap: TRIAL.weeklyCap, expiresInDays: TRIAL.days });
    },
    async setGrantStatus(grantId: string, status: Grant['status']) {
      const grant = await documents.grants.get(grantId);
      if (!grant) throw new ApiError(404, `Grant ${grantId} not found.`, { code: 'GRANT_NOT_FOUND' });
      await documents.grants.setStatus(grantId, status);
      return { ...grant, status };
    },
    createKey,
    async listKeys(accountId: string) {
      await requireAccount(accountId);
      return (await documents.keys.listByAccount(accountId)).map(publicKey);
    },
    async revokeKey(keyId: string) {
      const key = await documents.keys.get(keyId);
      if (!key) throw new ApiError(404, `Key ${keyId} not found.`, { code: 'KEY_NOT_FOUND' });
      await documents.keys.revoke(keyId, clock().toISOString());
      return publicKey({ ...key, revokedAt: key.revokedAt ?? clock().toISOString() });
    },
    async balance(accountId: string, grantId: string | null = null): Promise<BalanceView & { grants: Grant[] }> {
      await requireAccount(accountId);
      const view = await deps.billing.balance({ accountId, keyId: null, grantId });
      return { ...view, grants: await documents.grants.listByAccount(accountId) };
    },
    async createClone(accountId: string, input: { name: string; engine?: string; baseVoiceId: string; referenceAvailable?: boolean }): Promise<ClonedVoice> {
      await requireAccount(accountId);
      return documents.clones.create({
        id: 'clone_' + randomUUID(), accountId, name: input.name, engine: input.engine ?? 'v4',
        referenceAvailable: input.referenceAvailable ?? true, baseVoiceId: input.baseVoiceId, createdAt: clock().toISOString(),
      });
    },
    /** One step for a working key: account, grant and live key. */
    async bootstrap(input: { name: string; email?: string | null; grant?: Partial<GrantInput>; kind?: KeyKind }) {
      const account = await documents.accounts.create({ id: 'acc_' + randomUUID(), name: input.name, email: input.email ?? null, createdAt: clock().toISOString() });
      const grant = await createGrant(account.id, { totalTokens: 1_000_000, plan: 'standard', ...input.grant });
      const { apiKey, key } = await createKey(account.id, { kind: input.kind ?? 'live', grantId: grant.id });
      return { accountId: account.id, grantId: grant.id, keyId: key.id, apiKey };
    },
    async reconcile(grantId: string) {
      const grant = await documents.grants.get(grantId);
      if (!grant) throw new ApiError(404, `Grant ${grantId} not found.`, { code: 'GRANT_NOT_FOUND' });
      const sums = await documents.ledger.sumByGrant(grantId);
      const ledgerNet = sums.charged - sums.refunded;
      return { grantId, usedTokens: grant.usedTokens, ledgerCharged: sums.charged, ledgerRefunded: sums.refunded, ledgerNet, balanced: ledgerNet === grant.usedTokens };
    },
  };
}

export type AdminService = ReturnType<typeof createAdminService>;
