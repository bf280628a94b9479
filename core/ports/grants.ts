/**
 * Grants and the money movements written on them: the records the billing
 * service, the documents adapters and the jobs port share (a file of its own
 * so that the jobs port can name them without an import cycle).
 */

export type GrantStatus = 'active' | 'replaced' | 'revoked';

export interface Grant {
  id: string;
  accountId: string;
  /** plan label, e.g. `trial`, `pro`, `gift`. */
  plan: string;
  totalTokens: number;
  usedTokens: number;
  dailyCap: number | null;
  weeklyCap: number | null;
  /** window key (e.g. `2026-11-21`) and tokens used in it */
  dayKey: string | null;
  dayUsed: number;
  weekKey: string | null;
  weekUsed: number;
  expiresAt: string | null;
  isGift: boolean;
  engines: string[];
  status: GrantStatus;
  createdAt: string;
}

/** One money movement. Written atomically with the grant update (outbox). */
export interface LedgerEntry {
  id: string;
  kind: 'charge' | 'refund';
  grantId: string;
  accountId: string;
  keyId: string | null;
  /** id of the charge a refund returns (refund) or of the request (charge). */
  chargeId: string;
  requestId: string | null;
  route: string;
  tokens: number;
  /** cap windows the tokens were counted in, so a refund can return them to the same window. */
  dayKey: string | null;
  weekKey: string | null;
  at: string;
  /**
   * The `POST /tts` job a charge pays for, where the charge and the job are
   * two writes (MongoDB): the outbox keeps the entry until that job records
   * the charge, or refunds it if the job was dropped (core/billing/outbox-relay.ts).
   */
  jobId?: string;
}

/** Conditional charge: applied only when every condition still holds at write time. */
export interface ChargeCommand {
  grantId: string;
  tokens: number;
  dayKey: string;
  weekKey: string;
  now: string;
  entry: LedgerEntry;
  /**
   * The process answering the request this charge pays for. The charge is
   * then written together with a hold under that process, released once the
   * request has settled (kept or refunded); a hold outliving its process (a
   * crash, a SIGKILL) is refunded by core/billing/hold-recovery.ts.
   */
  holdFor?: string;
}

export type ChargeWriteResult =
  | { ok: true; grant: Grant }
  /** the grant changed under us or cannot pay any more; caller re-reads and decides. */
  | { ok: false; grant: Grant | null };

export interface RefundCommand {
  grantId: string;
  tokens: number;
  entry: LedgerEntry;
}
