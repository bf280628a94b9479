import { randomUUID } from 'node:crypto';
import type { Documents, Grant, KeyKind, ClonedVoice } from '../../core/ports/documents.ts';
import type { BillingService, BalanceView } from '../../core/billing/service.ts';
import { ApiError } from '../../core/errors.ts';
import { createAccountKeys, newGrant, type GrantInput, type PublicKey } from '../../core/account-keys.ts';
import { isExpired } from '../../core/billing/assessment.ts';

/**
 * Account administration from the admin CLI and the admin HTTP API:
 * accounts, grants, trials, keys and test clones. The key and trial rules
 * themselves are core's (core/account-keys.ts), shared with the console.
 */
export { MAX_ACTIVE_KEYS, TRIAL, publicKey, type GrantInput, type PublicKey } from '../../core/account-keys.ts';

export function createAdminService(deps: { documents: Documents; billing: BillingService; clock?: () => Date }) {
  const clock = deps.clock ?? (() => new Date());
  const { documents } = deps;
  const keys = createAccountKeys({ documents, clock });

  async function requireAccount(accountId: string) {
    const account = await documents.accounts.get(accountId);
    if (!account) throw new ApiError(404, `Account ${accountId} not found.`, { code: 'ACCOUNT_NOT_FOUND' });
    return account;
  }

  /**
   * The grant record `input` asks for at `now`, refused (400, nothing written) when it would be expired
   * from the start: no key could be issued against it, and its tokens could never be spent.
   */
  function grantRecord(accountId: string, input: GrantInput, now: Date, field: string): Grant {
    const grant = newGrant(accountId, input, now);
    if (isExpired(grant, now)) {
      throw new ApiError(400, [`${field} must be in the future`], { param: field, code: 'VALIDATION_FAILED' });
    }
    return grant;
  }

  async function createGrant(accountId: string, input: GrantInput): Promise<Grant> {
    await requireAccount(accountId);
    return documents.grants.create(grantRecord(accountId, input, clock(), 'expiresAt'));
  }

  async function createKey(accountId: string, input: { kind?: KeyKind; grantId?: string | null; name?: string | null }): Promise<{ apiKey: string; key: PublicKey }> {
    await requireAccount(accountId);
    return keys.issueKey(accountId, input);
  }

  return {
    async createAccount(input: { name: string; email?: string | null }) {
      return documents.accounts.create({ id: 'acc_' + randomUUID(), name: input.name, email: input.email ?? null, createdAt: clock().toISOString() });
    },
    getAccount: requireAccount,
    createGrant,
    async startTrial(accountId: string): Promise<Grant> {
      await requireAccount(accountId);
      return keys.startTrial(accountId);
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
      return keys.listKeys(accountId);
    },
    revokeKey: (keyId: string) => keys.revokeKey(keyId),
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
    /**
     * One step for a working key: account, grant and live key. Everything that could refuse is judged
     * before the first write, at one instant (the key is issued at the time the grant was found active),
     * so a refusal leaves no account or grant behind.
     */
    async bootstrap(input: { name: string; email?: string | null; grant?: Partial<GrantInput>; kind?: KeyKind }) {
      const now = clock();
      const accountId = 'acc_' + randomUUID();
      const record = grantRecord(accountId, { totalTokens: 1_000_000, plan: 'standard', ...input.grant }, now, 'grant.expiresAt');
      const account = await documents.accounts.create({ id: accountId, name: input.name, email: input.email ?? null, createdAt: now.toISOString() });
      const grant = await documents.grants.create(record);
      const { apiKey, key } = await createAccountKeys({ documents, clock: () => now }).issueKey(account.id, { kind: input.kind ?? 'live', grantId: grant.id });
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
