import type { ChargeCommand, LedgerEntry, RefundCommand } from '../../ports/documents.ts';

/**
 * Checks shared by every documents adapter. A malformed command is a
 * programming error in the billing code, so it throws instead of being
 * reported as a refused charge the caller might retry on another grant.
 */

function assertTokens(tokens: number): void {
  if (!Number.isSafeInteger(tokens) || tokens <= 0) {
    throw new TypeError(`tokens must be a positive integer, got ${tokens}`);
  }
}

/** Epoch milliseconds of `cmd.now`; expiry is compared as time, not as text. */
export function checkCharge(cmd: ChargeCommand): number {
  assertTokens(cmd.tokens);
  const nowMs = Date.parse(cmd.now);
  if (!Number.isFinite(nowMs)) throw new TypeError(`charge.now is not a date: ${cmd.now}`);
  const { entry } = cmd;
  if (entry.kind !== 'charge' || entry.grantId !== cmd.grantId || entry.tokens !== cmd.tokens) {
    throw new TypeError('charge entry must be a charge of the same grant and tokens as the command');
  }
  return nowMs;
}

export function checkRefund(cmd: RefundCommand): void {
  assertTokens(cmd.tokens);
  const { entry } = cmd;
  if (entry.kind !== 'refund' || entry.grantId !== cmd.grantId || !entry.chargeId) {
    throw new TypeError('refund entry must be a refund of the command grant naming its charge');
  }
}

/** The outbox records the windows the adapter actually counted the tokens in. */
export function chargeEntry(cmd: ChargeCommand): LedgerEntry {
  return { ...cmd.entry, dayKey: cmd.dayKey, weekKey: cmd.weekKey };
}

export function expiresAtMs(expiresAt: string | null): number | null {
  if (expiresAt === null) return null;
  const ms = Date.parse(expiresAt);
  if (!Number.isFinite(ms)) throw new TypeError(`grant.expiresAt is not a date: ${expiresAt}`);
  return ms;
}

/** How long the beat of a process that stopped is kept (HoldsStore.beat prunes older ones). */
export const BEATS_KEPT_MS = 24 * 3600 * 1000;
