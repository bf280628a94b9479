import type { JobsStore } from './jobs.ts';
import type { WebhooksStore } from './webhooks.ts';
import type { IdentityStore } from './identity.ts';
import type { Grant, GrantStatus, LedgerEntry, ChargeCommand, ChargeWriteResult, RefundCommand } from './grants.ts';

export type { Grant, GrantStatus, LedgerEntry, ChargeCommand, ChargeWriteResult, RefundCommand };

/**
 * Documents port: the system of record (accounts, keys, grants, the billing
 * ledger and its outbox, jobs, webhooks, users and their sign-in sessions).
 * Shaped by what the domain does with it. Adapters:
 * core/adapters/documents/sqlite.ts (embedded default) and
 * core/adapters/documents/mongo.ts (production).
 */

export interface Account {
  id: string;
  name: string;
  email: string | null;
  trialUsed: boolean;
  createdAt: string;
}

export type KeyKind = 'live' | 'test';

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  grantId: string;
  kind: KeyKind;
  /** sha256 hex of the plaintext key; the plaintext is never stored. */
  hash: string;
  /** first characters of the key, shown in listings (e.g. `vn_sk_ab12`). */
  prefix: string;
  name: string | null;
  createdAt: string;
  revokedAt: string | null;
  /** the last request made with it, to within a minute (the authenticator writes it at most once a minute per process) */
  lastUsedAt?: string | null;
}

/** A voice cloned in the web studio. The API only reads these. */
export interface ClonedVoice {
  /** `clone_<uuid>` */
  id: string;
  accountId: string;
  name: string;
  /** engine it was enrolled on; `v3` clones cannot be rendered any more */
  engine: string;
  /** false once the reference clip is gone */
  referenceAvailable: boolean;
  /** catalogue voice whose renderer approximates the clone on the embedded engine */
  baseVoiceId: string;
  createdAt: string;
}

export interface ClonesStore {
  create(voice: ClonedVoice): Promise<ClonedVoice>;
  get(id: string): Promise<ClonedVoice | null>;
  listByAccount(accountId: string): Promise<ClonedVoice[]>;
}

export interface AccountsStore {
  create(input: { id: string; name: string; email?: string | null; createdAt: string }): Promise<Account>;
  get(id: string): Promise<Account | null>;
  /** sets trialUsed when it was false; false when the trial was already taken. */
  claimTrial(id: string): Promise<boolean>;
}

export interface KeysStore {
  create(record: ApiKeyRecord): Promise<ApiKeyRecord>;
  findByHash(hash: string): Promise<ApiKeyRecord | null>;
  get(id: string): Promise<ApiKeyRecord | null>;
  listByAccount(accountId: string): Promise<ApiKeyRecord[]>;
  countActive(accountId: string): Promise<number>;
  revoke(id: string, at: string): Promise<boolean>;
  /** records a use of the key at `at`; never moves `lastUsedAt` backwards */
  touch(id: string, at: string): Promise<void>;
}

export interface GrantsStore {
  create(grant: Grant): Promise<Grant>;
  get(id: string): Promise<Grant | null>;
  /** active grants of the account, oldest first */
  listActive(accountId: string): Promise<Grant[]>;
  listByAccount(accountId: string): Promise<Grant[]>;
  /** every grant in id order, at most `limit` after `afterId` (null: from the first): the reconciler's walk */
  listPage(afterId: string | null, limit: number): Promise<Grant[]>;
  setStatus(id: string, status: GrantStatus): Promise<void>;
  /** atomic conditional update + ledger outbox entry in one write */
  charge(cmd: ChargeCommand): Promise<ChargeWriteResult>;
  /** returns tokens to the payer + outbox entry in one write; idempotent on entry.chargeId */
  refund(cmd: RefundCommand): Promise<{ applied: boolean }>;
}

/**
 * Holds on the charges of requests still being answered (`ChargeCommand.holdFor`)
 * and the beats of the processes answering them: a hold whose process has
 * stopped beating belongs to a request its crash cut off.
 */
export interface HoldsStore {
  /** the requests these charges paid for have settled (kept or refunded): their holds go */
  release(holds: ReadonlyArray<{ grantId: string; chargeId: string }>): Promise<void>;
  /** `instance` is alive until `untilMs`; its holds are not orphaned before then */
  beat(instance: string, untilMs: number): Promise<void>;
  /** at most `limit` charge entries held by processes whose last beat ran out by `nowMs` (or that never beat) */
  orphaned(nowMs: number, limit: number): Promise<LedgerEntry[]>;
}

/** A bus message whose publish failed, kept until it can be published (core/bus-spill.ts). */
export interface SpilledMessage {
  topic: string;
  id: string;
  key: string;
  value: unknown;
}

/**
 * Messages the bus could not take (out of reach past its publish deadline),
 * kept in the system of record so that a long bus outage delays them
 * instead of losing them. One message per topic and id: adding it again
 * changes nothing.
 */
export interface SpillStore {
  add(messages: readonly SpilledMessage[]): Promise<void>;
  /** the oldest first */
  pending(limit: number): Promise<SpilledMessage[]>;
  /** they were published */
  remove(messages: ReadonlyArray<Pick<SpilledMessage, 'topic' | 'id'>>): Promise<void>;
}

/** Outbox of ledger entries awaiting publication on the bus. */
export interface OutboxStore {
  pending(limit: number): Promise<LedgerEntry[]>;
  markPublished(ids: string[]): Promise<void>;
}

/** A span of entry times, `from` inclusive and `to` exclusive (ISO 8601 instants). */
export interface LedgerWindow {
  from: string;
  to: string;
  /** entries of these routes are left out of the sums */
  exceptRoutes?: readonly string[];
}

/** The billing ledger written by the ledger writer pipeline. */
export interface LedgerStore {
  /** idempotent on entry id; returns false when already present */
  append(entry: LedgerEntry): Promise<boolean>;
  /** sums of the grant's entries; with `window`, only entries with from <= at < to (ISO instants) and a route not in its exceptRoutes */
  sumByGrant(grantId: string, window?: LedgerWindow): Promise<{ charged: number; refunded: number; entries: number }>;
  listByGrant(grantId: string): Promise<LedgerEntry[]>;
}

export interface Documents {
  accounts: AccountsStore;
  keys: KeysStore;
  grants: GrantsStore;
  holds: HoldsStore;
  outbox: OutboxStore;
  ledger: LedgerStore;
  clones: ClonesStore;
  jobs: JobsStore;
  webhooks: WebhooksStore;
  /** users, sign-in sessions and lockout counters (core/ports/identity.ts) */
  identity: IdentityStore;
  spill: SpillStore;
  ping(): Promise<void>;
  close(): Promise<void>;
}
