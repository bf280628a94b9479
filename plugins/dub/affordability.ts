/**
 * SPEC Billing rule 4: before any work, the upload is checked for
 * affordability against its own duration, though the charge only happens
 * on success. This asks the same question the charge will (which grant
 * would pay, within its caps) without writing anything, and refuses with
 * the very refusal the charge would give (403 GRANT_TOKENS_EXHAUSTED,
 * 429 GRANT_DAILY_LIMIT, ...).
 */
import type { Documents, Grant } from '../../core/ports/documents.ts';
import { assessGrant, payerCandidates } from '../../core/billing/assessment.ts';
import { refusalFor } from '../../core/billing/refusals.ts';
import { capWindows } from '../../core/billing/windows.ts';

export interface PayerRef {
  accountId: string;
  grantId: string | null;
}

export async function assertAffordable(
  documents: Documents, payer: PayerRef, engine: string, tokens: number, timezoneOffsetMinutes: number, now = new Date(),
): Promise<void> {
  const all = await documents.grants.listActive(payer.accountId);
  let own: Grant | null = null;
  if (payer.grantId) own = all.find((g) => g.id === payer.grantId) ?? (await documents.grants.get(payer.grantId));
  const w = capWindows(now, timezoneOffsetMinutes);
  const candidates = payerCandidates(own, all, engine, now);
  if (candidates.some((g) => assessGrant(g, tokens, engine, now, w).canPay)) return;
  const ownAssessment = own ? assessGrant(own, tokens, engine, now, w) : null;
  throw refusalFor(ownAssessment, candidates.some((g) => g.id !== own?.id), tokens);
}
