import test from 'ava';
import { randomUUID } from 'node:crypto';
import { openMemoryDb } from '../../core/adapters/embedded-db.ts';
import { createSqliteDocuments } from '../../core/adapters/documents/sqlite.ts';
import { createSqliteAnalytics } from '../../core/adapters/analytics/sqlite.ts';
import { reconcileAll } from '../../core/billing/reconciliation.ts';
import { AUDIOBOOK_CHARGE_ROUTE } from '../../core/billing/ledger-routes.ts';
import type { Documents, Grant, LedgerEntry } from '../../core/ports/documents.ts';
import type { Analytics, OutcomeEvent } from '../../core/ports/analytics.ts';

/**
 * Ledger reconciliation (issue 15): a grant's usedTokens must equal its
 * ledger's charges minus refunds, and an account's ledger charges must equal
 * the tokenCost of its usage rows over the same window.
 */
const NOW = new Date('2026-11-21T12:00:00.000Z');
const IN_WINDOW = '2026-11-21T08:00:00.000Z';
const clock = () => NOW;

function setup() {
  const db = openMemoryDb();
  return { documents: createSqliteDocuments(db), analytics: createSqliteAnalytics(db), close: () => db.close() };
}

async function grantOf(documents: Documents, accountId = `acc_${randomUUID()}`): Promise<Grant> {
  return documents.grants.create({
    id: `grt_${randomUUID()}`, accountId, plan: 'pro', totalTokens: 100_000, usedTokens: 0, dailyCap: null, weeklyCap: null,
    dayKey: null, dayUsed: 0, weekKey: null, weekUsed: 0, expiresAt: null, isGift: false, engines: ['v4'], status: 'active',
    createdAt: '2026-11-01T00:00:00.000Z',
  });
}

/** Charges the grant (the outbox gets the entry) and, unless told otherwise, writes the entry to the ledger as the ledger writer would. */
async function charge(documents: Documents, grant: Grant, tokens: number, options: { toLedger?: boolean; at?: string; route?: string } = {}): Promise<LedgerEntry> {
  const id = `chg_${randomUUID()}`;
  const at = options.at ?? IN_WINDOW;
  const entry: LedgerEntry = {
    id, kind: 'charge', grantId: grant.id, accountId: grant.accountId, keyId: null, chargeId: id, requestId: `req_${id}`,
    route: options.route ?? 'tts', tokens, dayKey: '2026-11-21', weekKey: '2026-W47', at,
  };
  const result = await documents.grants.charge({ grantId: grant.id, tokens, dayKey: '2026-11-21', weekKey: '2026-W47', now: at, entry });
  if (!result.ok) throw new Error('charge refused');
  if (options.toLedger !== false) await documents.ledger.append(entry);
  return entry;
}

function outcomeOf(entry: LedgerEntry, tokensCharged = entry.tokens): OutcomeEvent {
  return {
    id: `out_${randomUUID()}`, at: entry.at, requestId: entry.requestId!, accountId: entry.accountId, keyId: null, grantId: entry.grantId,
    route: 'tts', status: 200, result: 'ok', tokensCharged, tokensRefunded: 0, characters: 50, audioSeconds: 1, genMs: 10,
    voice: null, voiceName: null, engine: 'v4', errorCode: null, cacheHit: false, queued: false, jobId: null,
  };
}

test('a grant whose ledger adds up to its usedTokens (charges minus refunds) is not reported', async (t) => {
  const { documents, close } = setup();
  t.teardown(close);
  const grant = await grantOf(documents);
  const first = await charge(documents, grant, 195);
  await charge(documents, grant, 390);
  const refund: LedgerEntry = { ...first, id: `rfd_${randomUUID()}`, kind: 'refund', chargeId: first.id };
  t.true((await documents.grants.refund({ grantId: grant.id, tokens: 195, entry: refund })).applied);
  await documents.ledger.append(refund);
  const report = await reconcileAll({ documents }, { settleMs: 0, clock });
  t.like(report, { grantsChecked: 1, grantsDrifted: 0, driftTokens: 0, grantsUnsettled: 0, usage: null });
  t.deepEqual(report.drifts, []);
});

test('a charge missing from the ledger and an entry the grant never paid are both drift, with sign and size', async (t) => {
  const { documents, close } = setup();
  t.teardown(close);
  const missing = await grantOf(documents);
  await charge(documents, missing, 195);
  await charge(documents, missing, 468, { toLedger: false }); // lost between the outbox and the ledger
  const extra = await grantOf(documents);
  await charge(documents, extra, 195);
  const stray = `chg_${randomUUID()}`; // an entry written twice under two ids, say
  await documents.ledger.append({
    id: stray, kind: 'charge', grantId: extra.id, accountId: extra.accountId, keyId: null, chargeId: stray, requestId: null,
    route: 'tts', tokens: 100, dayKey: null, weekKey: null, at: IN_WINDOW,
  });
  const fine = await grantOf(documents);
  await charge(documents, fine, 50);

  const report = await reconcileAll({ documents }, { settleMs: 0, clock, pageSize: 2 });
  t.is(report.grantsChecked, 3, 'every grant walked across pages of 2');
  t.is(report.grantsDrifted, 2);
  t.is(report.driftTokens, 468 + 100);
  t.deepEqual(report.drifts.map((d) => [d.grantId, d.driftTokens]), [[missing.id, 468], [extra.id, -100]]);
  t.like(report.drifts[0], { usedTokens: 663, ledgerCharged: 195, ledgerRefunded: 0 });
});

test('a grant charged again during the settle time is unsettled, not drift; one whose entry lands in time is fine', async (t) => {
  const { documents, close } = setup();
  t.teardown(close);
  const busy = await grantOf(documents);
  await charge(documents, busy, 195, { toLedger: false });
  const landing = await grantOf(documents);
  const inTransit = await charge(documents, landing, 300, { toLedger: false });
  const running = reconcileAll({ documents }, { settleMs: 300, clock });
  await new Promise((r) => setTimeout(r, 100));
  await charge(documents, busy, 195, { toLedger: false }); // still in use: its difference may be in transit
  await documents.ledger.append(inTransit); // the ledger writer catches up
  const report = await running;
  t.like(report, { grantsChecked: 2, grantsDrifted: 0, grantsUnsettled: 1, driftTokens: 0 });
});

test('ledger charges of the window are compared with usage tokenCost per account; rows outside the window are not', async (t) => {
  const { documents, analytics, close } = setup();
  t.teardown(close);
  const agree = await grantOf(documents);
  const lost = await grantOf(documents);
  const lostAccount2ndGrant = await grantOf(documents, lost.accountId);
  const outcomes: OutcomeEvent[] = [];
  outcomes.push(outcomeOf(await charge(documents, agree, 195)));
  outcomes.push(outcomeOf(await charge(documents, agree, 390)));
  outcomes.push(outcomeOf(await charge(documents, lost, 195)));
  await charge(documents, lostAccount2ndGrant, 78); // charged, but its outcome never reached analytics
  await charge(documents, agree, 1000, { at: '2026-11-19T00:00:00.000Z' }); // before the window: not compared
  await charge(documents, agree, 1000, { at: '2026-11-21T11:50:00.000Z' }); // inside the delay: not compared yet
  await (analytics as Analytics).recordOutcomes(outcomes);

  const report = await reconcileAll({ documents, analytics }, { settleMs: 0, clock, usageWindow: { windowMs: 86_400_000, delayMs: 15 * 60_000 } });
  t.is(report.grantsDrifted, 0);
  t.truthy(report.usage);
  t.is(report.usage!.from, '2026-11-20T11:45:00.000Z');
  t.is(report.usage!.to, '2026-11-21T11:45:00.000Z');
  t.like(report.usage, { accountsChecked: 2, accountsDrifted: 1, driftTokens: 78 });
  t.deepEqual(report.usage!.drifts, [{ accountId: lost.accountId, ledgerCharged: 195 + 78, usageTokenCost: 195, driftTokens: 78 }]);
});

test('audiobook chapter charges, which no request makes and usage never shows, are left out of the usage comparison but not of the grant check', async (t) => {
  const { documents, analytics, close } = setup();
  t.teardown(close);
  const grant = await grantOf(documents);
  const request = await charge(documents, grant, 195);
  await charge(documents, grant, 4_000, { route: AUDIOBOOK_CHARGE_ROUTE });
  await (analytics as Analytics).recordOutcomes([outcomeOf(request)]);

  const report = await reconcileAll({ documents, analytics }, { settleMs: 0, clock, usageWindow: { windowMs: 86_400_000, delayMs: 15 * 60_000 } });
  t.like(report, { grantsChecked: 1, grantsDrifted: 0 });
  t.like(report.usage, { accountsChecked: 1, accountsDrifted: 0, driftTokens: 0 });

  // The same chapter charge under a request's route would be drift: the comparison still sees every request.
  await charge(documents, grant, 4_000, { route: 'dialogue' });
  const again = await reconcileAll({ documents, analytics }, { settleMs: 0, clock, usageWindow: { windowMs: 86_400_000, delayMs: 15 * 60_000 } });
  t.like(again.usage, { accountsDrifted: 1, driftTokens: 4_000 });
});

test('a run stops between steps when its signal aborts (shutdown)', async (t) => {
  const { documents, close } = setup();
  t.teardown(close);
  await charge(documents, await grantOf(documents), 10, { toLedger: false });
  const controller = new AbortController();
  const running = reconcileAll({ documents }, { settleMs: 60_000, clock, signal: controller.signal });
  setTimeout(() => controller.abort(new Error('stopping')), 50);
  await t.throwsAsync(running, { message: 'stopping' });
});
