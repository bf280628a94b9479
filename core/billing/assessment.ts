import type { Grant } from '../ports/documents.ts';
import type { CapWindows } from './windows.ts';

/**
 * Pure decisions about one grant at one instant: can it pay, how much can it
 * spend in one call, and why not. No I/O, so it is table-tested on its own.
 */
export type CannotPayReason = 'inactive' | 'expired' | 'used_up' | 'exhausted' | 'daily' | 'weekly' | 'engine';

export type Assessment =
  | { canPay: true; spendable: number }
  | {
    canPay: false; reason: CannotPayReason; spendable: number; resetAt: string | null;
    /** SPEC's `remaining`: tokens still available under the limit that refused (the balance, the daily or the weekly cap) */
    limitRemaining: number;
  };

export function isExpired(grant: Grant, now: Date): boolean {
  return !grant.isGift && grant.expiresAt !== null && Date.parse(grant.expiresAt) <= now.getTime();
}

export function tokensLeft(grant: Grant): number {
  return Math.max(0, grant.totalTokens - grant.usedTokens);
}

export function dayUsed(grant: Grant, w: CapWindows): number {
  return grant.dayKey === w.dayKey ? grant.dayUsed : 0;
}

export function weekUsed(grant: Grant, w: CapWindows): number {
  return grant.weekKey === w.weekKey ? grant.weekUsed : 0;
}

/** Gifts have no caps, whatever the record says. */
export function dailyCap(grant: Grant): number | null {
  return grant.isGift ? null : grant.dailyCap;
}

export function weeklyCap(grant: Grant): number | null {
  return grant.isGift ? null : grant.weeklyCap;
}

/** The most this grant can spend in one call now. */
export function spendableNow(grant: Grant, now: Date, w: CapWindows): number {
  if (grant.status !== 'active' || isExpired(grant, now)) return 0;
  let most = tokensLeft(grant);
  const dc = dailyCap(grant);
  if (dc !== null) most = Math.min(most, Math.max(0, dc - dayUsed(grant, w)));
  const wc = weeklyCap(grant);
  if (wc !== null) most = Math.min(most, Math.max(0, wc - weekUsed(grant, w)));
  return most;
}

/** What it can spend on `engine`: nothing when it does not cover the engine (a grant of a retired engine). */
export function spendableFor(grant: Grant, engine: string, now: Date, w: CapWindows): number {
  return grant.engines.includes(engine) ? spendableNow(grant, now, w) : 0;
}

export function assessGrant(grant: Grant, tokens: number, engine: string, now: Date, w: CapWindows): Assessment {
  const spendable = spendableNow(grant, now, w);
  const refuse = (reason: CannotPayReason, limitRemaining = spendable, resetAt: string | null = null): Assessment => ({
    canPay: false, reason, spendable, resetAt, limitRemaining,
  });
  if (grant.status !== 'active') return refuse('inactive');
  if (isExpired(grant, now)) return refuse('expired');
  if (!grant.engines.includes(engine)) return refuse('engine');
  const left = tokensLeft(grant);
  if (left === 0) return refuse('used_up', 0);
  if (left < tokens) return refuse('exhausted', left);
  // When both caps are short the week binds: it never reopens before the day, so a client told to wait for the
  // daily reset would be refused again then.
  const wc = weeklyCap(grant);
  if (wc !== null && weekUsed(grant, w) + tokens > wc) return refuse('weekly', Math.max(0, wc - weekUsed(grant, w)), w.weekResetAt);
  const dc = dailyCap(grant);
  if (dc !== null && dayUsed(grant, w) + tokens > dc) return refuse('daily', Math.max(0, dc - dayUsed(grant, w)), w.dayResetAt);
  return { canPay: true, spendable };
}

/**
 * Which grants may pay, in order: the key's own grant first, then the other
 * active grants of the account covering the engine, oldest first.
 */
export function payerCandidates(own: Grant | null, accountGrants: Grant[], engine: string, now: Date): Grant[] {
  const others = accountGrants
    .filter((g) => g.id !== own?.id && g.status === 'active' && !isExpired(g, now) && g.engines.includes(engine))
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  return own ? [own, ...others] : others;
}
