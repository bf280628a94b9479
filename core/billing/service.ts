import { randomUUID } from 'node:crypto';
import { timeOrderedUuid } from '../ids.ts';
import type { ChargeCommand, ChargeWriteResult, Documents, Grant, LedgerEntry } from '../ports/documents.ts';
import type { Charge } from '../ports/charge.ts';

export type { Charge };
import type { EngineInfo } from '../../config/engines.ts';
import type { Metrics } from '../metrics.ts';
import { DomainError } from '../errors.ts';
import { capWindows, type CapWindows } from './windows.ts';
import { assessGrant, payerCandidates, spendableFor, tokensLeft, dayUsed, weekUsed, dailyCap, weeklyCap, isExpired } from './assessment.ts';
import { concurrentConflict, refusalFor } from './refusals.ts';
import { countCharacters, priceTokens } from './pricing.ts';

/**
 * The write that applies one charge attempt: by default the grant's own
 * conditional update (`documents.grants.charge`); `POST /tts` passes one that
 * applies it together with its job (core/ports/jobs.ts `JobSubmission`).
 * It may throw a refusal of its own (a full queue), which ends the charge.
 */
export type ChargeWriter = (cmd: ChargeCommand, charge: Charge) => Promise<ChargeWriteResult>;

/** The payer's grants as `assess` read them: `charge` may start from them instead of reading again. */
export interface PayerGrants {
  readonly own: Grant | null;
  readonly all: readonly Grant[];
}

export interface ChargeInput {
  payer: Payer;
  engine: string;
  tokens: number;
  route: string;
  requestId: string | null;
  write?: ChargeWriter;
  /**
   * Grants `assess` read for this request. The first attempt starts from
   * them (the conditional write still decides); a refusal is never made from
   * them, only from a fresh read.
   */
  grants?: PayerGrants;
  /**
   * Hold the charge under this process until `release` (the request has
   * settled): should the process die first, hold-recovery.ts refunds it.
   * Charges whose own records settle them (a job, a chapter) need none.
   */
  hold?: boolean;
}

/** Who is asking: set by core's auth phase. */
export interface Payer {
  accountId: string;
  keyId: string | null;
  /** the key's own grant; null for account-level callers (MCP over OAuth) */
  grantId: string | null;
}

export interface CapView {
  limit: number;
  used: number;
  remaining: number;
  resetAt: string;
}

export interface BalanceView {
  remaining: number;
  spendableTokens: number;
  totalRemainingTokens: number;
  plan: {
    grantId: string;
    name: string;
    totalTokens: number;
    usedTokens: number;
    remainingTokens: number;
    daily: CapView | null;
    weekly: CapView | null;
    expiresAt: string | null;
    isGift: boolean;
  } | null;
}

export interface BillingService {
  readonly globalMultiplier: number;
  engines(): EngineInfo[];
  engine(key: string): EngineInfo | undefined;
  /** characters as billed and the token price */
  price(input: { text: string; engine: string; aiRefine: boolean }): { characters: number; tokens: number };
  priceCharacters(input: { characters: number; engine: string; aiRefine: boolean }): number;
  /**
   * Throws the SPEC refusal `charge` would throw when no grant can pay
   * `tokens` now, without charging: a cheap read that lets a route refuse
   * before any expensive work. `charge` still decides (a race may change it).
   */
  assess(input: { payer: Payer; engine: string; tokens: number }): Promise<PayerGrants>;
  /** charges one grant or throws the SPEC refusal */
  charge(input: ChargeInput): Promise<Charge>;
  /** returns the charge to its payer; idempotent per charge */
  refund(charge: Charge, tokens?: number): Promise<boolean>;
  /**
   * The requests these held charges paid for have settled: the holds go.
   * Holds a failed call could not release are kept here and go with the
   * next call (`release([])` retries them alone).
   */
  release(charges: readonly Charge[]): Promise<void>;
  /** this process, as its holds name it */
  readonly instance: string;
  balance(payer: Payer, engine?: string): Promise<BalanceView>;
}

/** Request-scoped billing: records charges and refunds on the request's outcome. */
export interface RequestBilling {
  charge(input: { engine: string; tokens: number; write?: ChargeWriter; grants?: PayerGrants }): Promise<Charge>;
  refund(charge: Charge, tokens?: number): Promise<void>;
}

export interface BillingDeps {
  documents: Documents;
  engines: EngineInfo[];
  globalMultiplier: number;
  aiRefineSurchargePerChar: number;
  timezoneOffsetMinutes: number;
  metrics?: Metrics;
  clock?: () => Date;
  /** this process, as its holds name it (a fresh id unless given) */
  instance?: string;
}

const CONFLICT_RETRIES = 3;
/** Holds waiting for a release to be retried, at most; beyond it a crash would refund those requests (the customer's favour). */
const UNRELEASED_KEPT = 100_000;

export function createBillingService(deps: BillingDeps): BillingService {
  const clock = deps.clock ?? (() => new Date());
  const instance = deps.instance ?? `proc_${randomUUID()}`;
  // A hold left by a failed release would stay while this process lives and be refunded after it stops.
  const unreleased = new Map<string, Charge>();
  const engineByKey = new Map(deps.engines.map((e) => [e.key, e]));
  const multiplier = (engine: string) => {
    const info = engineByKey.get(engine);
    if (!info) throw new DomainError('invalid', `Unknown engine "${engine}".`, { param: 'engine' });
    return info.billingMultiplier;
  };
  const priceCharacters = (input: { characters: number; engine: string; aiRefine: boolean }) =>
    priceTokens({
      characters: input.characters,
      engineMultiplier: multiplier(input.engine),
      globalMultiplier: deps.globalMultiplier,
      aiRefine: input.aiRefine,
      aiRefineSurchargePerChar: deps.aiRefineSurchargePerChar,
    });

  async function loadGrants(payer: Payer): Promise<{ own: Grant | null; all: Grant[] }> {
    const all = await deps.documents.grants.listActive(payer.accountId);
    let own: Grant | null = null;
    if (payer.grantId) own = all.find((g) => g.id === payer.grantId) ?? (await deps.documents.grants.get(payer.grantId));
    return { own, all };
  }

  async function tryCharge(grant: Grant, input: ChargeInput, now: Date, w: CapWindows): Promise<Charge | 'lost'> {
    const id = 'chg_' + timeOrderedUuid(now.getTime());
    const at = now.toISOString();
    const entry: LedgerEntry = {
      id, kind: 'charge', grantId: grant.id, accountId: grant.accountId, keyId: input.payer.keyId, chargeId: id,
      requestId: input.requestId, route: input.route, tokens: input.tokens, dayKey: w.dayKey, weekKey: w.weekKey, at,
    };
    const charge: Charge = {
      id, grantId: grant.id, accountId: grant.accountId, keyId: input.payer.keyId, tokens: input.tokens, engine: input.engine,
      route: input.route, requestId: input.requestId, dayKey: w.dayKey, weekKey: w.weekKey, at,
    };
    const cmd: ChargeCommand = { grantId: grant.id, tokens: input.tokens, dayKey: w.dayKey, weekKey: w.weekKey, now: at, entry };
    if (input.hold) cmd.holdFor = instance;
    const result = input.write ? await input.write(cmd, charge) : await deps.documents.grants.charge(cmd);
    if (!result.ok) return 'lost';
    deps.metrics?.tokensCharged.inc({ route: input.route }, input.tokens);
    return charge;
  }

  return {
    instance,
    globalMultiplier: deps.globalMultiplier,
    engines: () => deps.engines,
    engine: (key) => engineByKey.get(key),
    price(input) {
      const characters = countCharacters(input.text);
      return { characters, tokens: priceCharacters({ characters, engine: input.engine, aiRefine: input.aiRefine }) };
    },
    priceCharacters,

    async assess(input) {
      const now = clock();
      const w = capWindows(now, deps.timezoneOffsetMinutes);
      const grants = await loadGrants(input.payer);
      const { own, all } = grants;
      const candidates = payerCandidates(own, all, input.engine, now);
      if (candidates.some((grant) => assessGrant(grant, input.tokens, input.engine, now, w).canPay)) return grants;
      const ownAssessment = own ? assessGrant(own, input.tokens, input.engine, now, w) : null;
      throw refusalFor(ownAssessment, candidates.some((g) => g.id !== own?.id), input.tokens);
    },

    async charge(input) {
      for (let attempt = 0; attempt <= CONFLICT_RETRIES; attempt++) {
        const now = clock();
        const w = capWindows(now, deps.timezoneOffsetMinutes);
        const reused = attempt === 0 ? input.grants : undefined;
        const { own, all } = reused ?? (await loadGrants(input.payer));
        const candidates = payerCandidates(own, [...all], input.engine, now);
        // Grants read again after a lost write: a refusal is computed from them, never from the stale snapshot.
        const fresh = new Map<string, Grant | null>();
        let raced = false;
        for (const grant of candidates) {
          if (!assessGrant(grant, input.tokens, input.engine, now, w).canPay) continue;
          const charged = await tryCharge(grant, input, now, w);
          if (charged !== 'lost') return charged;
          // The conditional write lost: a concurrent request of ours changed the grant.
          const reread = await deps.documents.grants.get(grant.id);
          fresh.set(grant.id, reread);
          // It can pay after all (a refund landed meanwhile): it is tried again before any grant after it.
          if (reread && assessGrant(reread, input.tokens, input.engine, now, w).canPay) {
            raced = true;
            break;
          }
        }
        if (!raced) {
          // Grants handed in may be stale: refuse only from a read of our own.
          if (reused) continue;
          const ownNow = own && fresh.has(own.id) ? fresh.get(own.id)! : own;
          const ownAssessment = ownNow ? assessGrant(ownNow, input.tokens, input.engine, now, w) : null;
          const othersExist = candidates.some((g) => g.id !== own?.id);
          throw refusalFor(ownAssessment, othersExist, input.tokens);
        }
      }
      throw concurrentConflict();
    },

    async refund(charge, tokens = charge.tokens) {
      const amount = Math.min(tokens, charge.tokens);
      if (amount <= 0) return false;
      const now = clock();
      const entry: LedgerEntry = {
        id: 'rfd_' + charge.id.slice(4), kind: 'refund', grantId: charge.grantId, accountId: charge.accountId, keyId: charge.keyId,
        chargeId: charge.id, requestId: charge.requestId, route: charge.route, tokens: amount, dayKey: charge.dayKey, weekKey: charge.weekKey, at: now.toISOString(),
      };
      const { applied } = await deps.documents.grants.refund({ grantId: charge.grantId, tokens: amount, entry });
      if (applied) deps.metrics?.tokensRefunded.inc({ route: charge.route }, amount);
      return applied;
    },

    async release(charges) {
      const retried = [...unreleased.values()];
      const all = [...retried, ...charges];
      if (all.length === 0) return;
      try {
        await deps.documents.holds.release(all.map((c) => ({ grantId: c.grantId, chargeId: c.id })));
      } catch (err) {
        for (const charge of charges) if (unreleased.size < UNRELEASED_KEPT) unreleased.set(charge.id, charge);
        throw err;
      }
      for (const charge of retried) unreleased.delete(charge.id);
    },

    async balance(payer, engine = deps.engines.find((e) => e.isDefault)?.key ?? 'v4') {
      const now = clock();
      const w = capWindows(now, deps.timezoneOffsetMinutes);
      const { own, all } = await loadGrants(payer);
      const payers = payerCandidates(own, all, engine, now);
      let best: Grant | null = own;
      let remaining = own ? spendableFor(own, engine, now, w) : 0;
      for (const g of payers) {
        const s = spendableFor(g, engine, now, w);
        if (s > remaining) { remaining = s; best = g; }
      }
      best ??= payers[0] ?? null;
      const spendableTokens = payers.reduce((sum, g) => sum + spendableFor(g, engine, now, w), 0);
      const totalRemainingTokens = all.filter((g) => !isExpired(g, now)).reduce((sum, g) => sum + tokensLeft(g), 0);
      return { remaining, spendableTokens, totalRemainingTokens, plan: best ? planView(best, w) : null };
    },
  };
}

/** One grant as `GET /balance` shows its plan: totals, remainder and each cap's window (the console lists every grant this way). */
export function planView(g: Grant, w: CapWindows): NonNullable<BalanceView['plan']> {
  const dc = dailyCap(g);
  const wc = weeklyCap(g);
  return {
    grantId: g.id,
    name: g.plan,
    totalTokens: g.totalTokens,
    usedTokens: g.usedTokens,
    remainingTokens: tokensLeft(g),
    daily: dc === null ? null : { limit: dc, used: dayUsed(g, w), remaining: Math.max(0, dc - dayUsed(g, w)), resetAt: w.dayResetAt },
    weekly: wc === null ? null : { limit: wc, used: weekUsed(g, w), remaining: Math.max(0, wc - weekUsed(g, w)), resetAt: w.weekResetAt },
    expiresAt: g.isGift ? null : g.expiresAt,
    isGift: g.isGift,
  };
}
