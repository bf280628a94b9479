import type { Documents, Grant } from '../ports/documents.ts';
import type { Analytics } from '../ports/analytics.ts';
import { ROUTES_WITHOUT_USAGE } from './ledger-routes.ts';

/**
 * Ledger reconciliation: every grant's `usedTokens` must equal what its
 * ledger entries add up to (charges minus refunds), and the tokens the ledger
 * charged an account must equal the `tokenCost` usage analytics recorded for
 * it (charges no request made, audiobook chapters, have no usage rows and
 * are left out of that side: ledger-routes.ts). Shared by the admin CLI
 * (`reconcile-all`) and the scheduled reconciler (pipelines/reconciler).
 *
 * The grant is written first and its ledger entry a moment later (outbox,
 * bus, ledger writer), so a grant charged while it is read shows a difference
 * that is only in transit. A grant that differs is read again after
 * `settleMs`: if its usage did not move meanwhile and the difference is still
 * there, it is drift; if it moved, it is "unsettled" (busy) and the next run
 * looks again.
 */
export interface GrantDrift {
  grantId: string;
  accountId: string;
  usedTokens: number;
  ledgerCharged: number;
  ledgerRefunded: number;
  /** usedTokens − (charged − refunded): positive = the ledger lacks entries, negative = it has too many */
  driftTokens: number;
}

export interface AccountUsageDrift {
  accountId: string;
  /** charges in the ledger whose time falls in the window */
  ledgerCharged: number;
  /** `tokenCost` of the account's usage rows in the window */
  usageTokenCost: number;
  /** ledgerCharged − usageTokenCost */
  driftTokens: number;
}

export interface ReconciliationReport {
  startedAt: string;
  finishedAt: string;
  grantsChecked: number;
  /** grants whose usage still differs from their ledger after the settle time */
  grantsDrifted: number;
  /** sum of |driftTokens| over drifted grants */
  driftTokens: number;
  /** grants that differed but were charged or refunded during the settle time */
  grantsUnsettled: number;
  drifts: GrantDrift[];
  /** null when usage analytics was not compared */
  usage: {
    from: string;
    to: string;
    accountsChecked: number;
    accountsDrifted: number;
    /** sum of |driftTokens| over drifted accounts */
    driftTokens: number;
    drifts: AccountUsageDrift[];
  } | null;
}

export interface ReconcileOptions {
  /** grants read per page (default 500) */
  pageSize?: number;
  /** ledger reads in flight at once (default 8) */
  concurrency?: number;
  /** wait before re-reading grants that differ (default 30 s) */
  settleMs?: number;
  /**
   * Compare ledger charges with usage analytics over [now − delay − window,
   * now − delay). Outcome events are written when a response ends and the
   * aggregator writes in batches, so the window stops `delayMs` (default 15
   * minutes) short of now. Null skips the comparison.
   */
  usageWindow?: { windowMs: number; delayMs: number } | null;
  /** most drifts listed in the report (all are counted; default 100) */
  listLimit?: number;
  clock?: () => Date;
  /** aborts between steps (shutdown) */
  signal?: AbortSignal;
}

export interface ReconcileDeps {
  documents: Documents;
  /** usage analytics; omit to compare grants with the ledger only */
  analytics?: Analytics | null;
}

const DEFAULTS = { pageSize: 500, concurrency: 8, settleMs: 30_000, listLimit: 100 };

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Runs `work` over `items` with at most `limit` in flight, in order of the items. */
async function eachLimited<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]!);
  });
  await Promise.all(runners);
}

async function grantDrift(documents: Documents, grant: Grant): Promise<GrantDrift> {
  const sums = await documents.ledger.sumByGrant(grant.id);
  return {
    grantId: grant.id, accountId: grant.accountId, usedTokens: grant.usedTokens,
    ledgerCharged: sums.charged, ledgerRefunded: sums.refunded,
    driftTokens: grant.usedTokens - (sums.charged - sums.refunded),
  };
}

/** Walks every grant (and, with analytics, every account charged in the window) and reports what does not add up. */
export async function reconcileAll(deps: ReconcileDeps, options: ReconcileOptions = {}): Promise<ReconciliationReport> {
  const { pageSize, concurrency, settleMs, listLimit } = { ...DEFAULTS, ...options };
  const clock = options.clock ?? (() => new Date());
  const signal = options.signal;
  const { documents } = deps;
  const startedAt = clock();
  const usageWindow = deps.analytics && options.usageWindow !== null ? options.usageWindow ?? { windowMs: 86_400_000, delayMs: 900_000 } : null;
  const window = usageWindow
    ? {
      from: new Date(startedAt.getTime() - usageWindow.delayMs - usageWindow.windowMs).toISOString(),
      to: new Date(startedAt.getTime() - usageWindow.delayMs).toISOString(),
    }
    : null;

  let grantsChecked = 0;
  const differing: GrantDrift[] = [];
  const chargedByAccount = new Map<string, number>();
  let after: string | null = null;
  for (;;) {
    signal?.throwIfAborted();
    const page: Grant[] = await documents.grants.listPage(after, pageSize);
    if (page.length === 0) break;
    after = page[page.length - 1]!.id;
    await eachLimited(page, concurrency, async (grant) => {
      const drift = await grantDrift(documents, grant);
      if (drift.driftTokens !== 0) differing.push(drift);
      if (window) {
        const { charged } = await documents.ledger.sumByGrant(grant.id, { ...window, exceptRoutes: ROUTES_WITHOUT_USAGE });
        if (charged > 0) chargedByAccount.set(grant.accountId, (chargedByAccount.get(grant.accountId) ?? 0) + charged);
      }
    });
    grantsChecked += page.length;
  }

  // A second look at the grants that differed, once in-flight entries have had time to land.
  const drifts: GrantDrift[] = [];
  let grantsUnsettled = 0;
  if (differing.length > 0) {
    if (settleMs > 0) await sleep(settleMs, signal);
    await eachLimited(differing, concurrency, async (first) => {
      const grant = await documents.grants.get(first.grantId);
      if (!grant) return;
      if (grant.usedTokens !== first.usedTokens) {
        grantsUnsettled++;
        return;
      }
      const again = await grantDrift(documents, grant);
      if (again.driftTokens !== 0) drifts.push(again);
    });
  }
  drifts.sort((a, b) => Math.abs(b.driftTokens) - Math.abs(a.driftTokens) || a.grantId.localeCompare(b.grantId));

  let usage: ReconciliationReport['usage'] = null;
  if (window && deps.analytics) {
    const analytics = deps.analytics;
    const accountDrifts: AccountUsageDrift[] = [];
    await eachLimited([...chargedByAccount], Math.min(concurrency, 4), async ([accountId, ledgerCharged]) => {
      signal?.throwIfAborted();
      const report = await analytics.usage({ scope: 'account', accountId, keyId: null, from: new Date(window.from), to: new Date(window.to) });
      const usageTokenCost = report.totals.tokenCost;
      if (usageTokenCost !== ledgerCharged) accountDrifts.push({ accountId, ledgerCharged, usageTokenCost, driftTokens: ledgerCharged - usageTokenCost });
    });
    accountDrifts.sort((a, b) => Math.abs(b.driftTokens) - Math.abs(a.driftTokens) || a.accountId.localeCompare(b.accountId));
    usage = {
      ...window,
      accountsChecked: chargedByAccount.size,
      accountsDrifted: accountDrifts.length,
      driftTokens: accountDrifts.reduce((sum, d) => sum + Math.abs(d.driftTokens), 0),
      drifts: accountDrifts.slice(0, listLimit),
    };
  }

  return {
    startedAt: startedAt.toISOString(),
    finishedAt: clock().toISOString(),
    grantsChecked,
    grantsDrifted: drifts.length,
    driftTokens: drifts.reduce((sum, d) => sum + Math.abs(d.driftTokens), 0),
    grantsUnsettled,
    drifts: drifts.slice(0, listLimit),
    usage,
  };
}
