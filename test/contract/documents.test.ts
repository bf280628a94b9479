import test, { type ExecutionContext } from 'ava';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { openEmbeddedDb, openMemoryDb } from '../../core/adapters/embedded-db.ts';
import { createSqliteDocuments } from '../../core/adapters/documents/sqlite.ts';
import { createMongoDocuments } from '../../core/adapters/documents/mongo.ts';
import { DomainError } from '../../core/errors.ts';
import type { ChargeCommand, Documents, Grant, LedgerEntry } from '../../core/ports/documents.ts';

/** The documents contract, run against every adapter. */
type Harness = { docs: Documents; close(): Promise<void> };
type Open = () => Promise<Harness>;

const PRICE = 195; // 50 characters x v4 multiplier 3 x 1.3
const DAY = '2026-11-21';
const WEEK = '2026-W47';
const NOW = '2026-11-21T10:00:00.000Z';

function newGrant(overrides: Partial<Grant> = {}): Grant {
  return {
    id: `grant_${randomUUID()}`, accountId: `acct_${randomUUID()}`, plan: 'pro',
    totalTokens: 10_000, usedTokens: 0, dailyCap: null, weeklyCap: null,
    dayKey: null, dayUsed: 0, weekKey: null, weekUsed: 0, expiresAt: null,
    isGift: false, engines: ['v4'], status: 'active', createdAt: '2026-11-01T00:00:00.000Z',
    ...overrides,
  };
}

function chargeOf(grant: Grant, tokens: number, at: Partial<Pick<ChargeCommand, 'dayKey' | 'weekKey' | 'now'>> = {}): ChargeCommand {
  const id = `chg_${randomUUID()}`;
  const cmd = { grantId: grant.id, tokens, dayKey: at.dayKey ?? DAY, weekKey: at.weekKey ?? WEEK, now: at.now ?? NOW };
  const entry: LedgerEntry = {
    id, kind: 'charge', grantId: grant.id, accountId: grant.accountId, keyId: 'key_1', chargeId: id,
    requestId: `req_${randomUUID()}`, route: 'POST /tts', tokens, dayKey: cmd.dayKey, weekKey: cmd.weekKey, at: cmd.now,
  };
  return { ...cmd, entry };
}

function refundOf(charge: ChargeCommand, tokens = charge.tokens) {
  const entry: LedgerEntry = {
    ...charge.entry, id: `rfd_${charge.entry.id.slice(4)}`, kind: 'refund', chargeId: charge.entry.id, tokens,
  };
  return { grantId: charge.grantId, tokens, entry };
}

async function outboxOf(docs: Documents, grantId: string): Promise<LedgerEntry[]> {
  return (await docs.outbox.pending(10_000)).filter((e) => e.grantId === grantId);
}

function documentsContract(adapter: string, open: Open): void {
  const it = (rule: string, body: (docs: Documents, t: ExecutionContext) => Promise<void>) =>
    test(`${adapter}: ${rule}`, async (t) => {
      const harness = await open();
      t.teardown(() => harness.close());
      await body(harness.docs, t);
    });

  it('a free trial can be started once per account', async (docs, t) => {
    await docs.accounts.create({ id: 'acct_a', name: 'A', createdAt: NOW });
    t.like(await docs.accounts.get('acct_a'), { id: 'acct_a', email: null, trialUsed: false });
    t.true(await docs.accounts.claimTrial('acct_a'));
    t.false(await docs.accounts.claimTrial('acct_a'));
    t.true((await docs.accounts.get('acct_a'))?.trialUsed);
    t.is(await docs.accounts.get('acct_missing'), null);
  });

  it('keys are found by hash; only non-revoked keys count as active', async (docs, t) => {
    const key = (n: number) => ({
      id: `key_${n}`, accountId: 'acct_k', grantId: 'grant_k', kind: 'live' as const, hash: `hash_${n}`,
      prefix: 'vn_sk_ab12', name: null, createdAt: `2026-11-0${n}T00:00:00.000Z`, revokedAt: null, lastUsedAt: null,
    });
    for (const n of [1, 2, 3]) await docs.keys.create(key(n));
    t.deepEqual(await docs.keys.findByHash('hash_2'), key(2));
    t.is(await docs.keys.findByHash('hash_x'), null);
    t.is(await docs.keys.countActive('acct_k'), 3);
    t.true(await docs.keys.revoke('key_1', NOW));
    t.false(await docs.keys.revoke('key_1', NOW));
    t.is(await docs.keys.countActive('acct_k'), 2);
    t.is((await docs.keys.get('key_1'))?.revokedAt, NOW);
    t.deepEqual((await docs.keys.listByAccount('acct_k')).map((k) => k.id), ['key_1', 'key_2', 'key_3']);
    // better-sqlite3 rejects with an object that is not an Error instance
    await t.throwsAsync(docs.keys.create({ ...key(4), hash: 'hash_2' }), { any: true });
  });

  it('a key\'s last use is recorded and never moves backwards (listings show "last used")', async (docs, t) => {
    await docs.keys.create({ id: 'key_u', accountId: 'acct_u', grantId: 'grant_u', kind: 'live', hash: 'hash_u', prefix: 'vn_sk_uu', name: null, createdAt: NOW, revokedAt: null });
    t.is((await docs.keys.get('key_u'))?.lastUsedAt, null, 'never used');
    await docs.keys.touch('key_u', '2026-11-21T10:05:00.000Z');
    t.is((await docs.keys.get('key_u'))?.lastUsedAt, '2026-11-21T10:05:00.000Z');
    await docs.keys.touch('key_u', '2026-11-21T10:01:00.000Z');
    t.is((await docs.keys.findByHash('hash_u'))?.lastUsedAt, '2026-11-21T10:05:00.000Z', 'a late write of an older use changes nothing');
    await docs.keys.touch('key_u', '2026-11-21T10:09:00.000Z');
    t.is((await docs.keys.listByAccount('acct_u'))[0]?.lastUsedAt, '2026-11-21T10:09:00.000Z');
    await t.notThrowsAsync(docs.keys.touch('key_missing', NOW));
  });

  it('active grants of an account are listed oldest first', async (docs, t) => {
    const accountId = 'acct_g';
    const young = newGrant({ accountId, createdAt: '2026-11-03T00:00:00.000Z', isGift: true, engines: ['v4', 'v3'] });
    const old = newGrant({ accountId, createdAt: '2026-11-01T00:00:00.000Z' });
    const gone = newGrant({ accountId, createdAt: '2026-11-02T00:00:00.000Z' });
    for (const g of [young, old, gone]) await docs.grants.create(g);
    await docs.grants.setStatus(gone.id, 'replaced');
    t.deepEqual(await docs.grants.get(young.id), young);
    t.deepEqual((await docs.grants.listActive(accountId)).map((g) => g.id), [old.id, young.id]);
    t.deepEqual((await docs.grants.listByAccount(accountId)).map((g) => g.id), [old.id, gone.id, young.id]);
  });

  it('a charge deducts tokens and queues its ledger entry in the same write', async (docs, t) => {
    const grant = await docs.grants.create(newGrant());
    const cmd = chargeOf(grant, PRICE);
    const res = await docs.grants.charge(cmd);
    t.true(res.ok);
    t.like(res.grant, { usedTokens: PRICE, dayKey: DAY, dayUsed: PRICE, weekKey: WEEK, weekUsed: PRICE });
    t.deepEqual(await outboxOf(docs, grant.id), [cmd.entry]);
  });

  it('a grant that cannot pay is refused with a fresh read and nothing written', async (docs, t) => {
    const grant = await docs.grants.create(newGrant({ totalTokens: 300, usedTokens: 200 }));
    const res = await docs.grants.charge(chargeOf(grant, 101));
    t.false(res.ok);
    t.deepEqual(res.grant, grant);
    t.deepEqual(await outboxOf(docs, grant.id), []);
    t.true((await docs.grants.charge(chargeOf(grant, 100))).ok);
    t.like(await docs.grants.charge(chargeOf(newGrant(), 1)), { ok: false, grant: null });
  });

  it('an expired grant pays nothing (expiresAt must be after now)', async (docs, t) => {
    const grant = await docs.grants.create(newGrant({ expiresAt: '2026-11-21T10:00:00.000Z' }));
    t.true((await docs.grants.charge(chargeOf(grant, 10, { now: '2026-11-21T09:59:59.999Z' }))).ok);
    t.false((await docs.grants.charge(chargeOf(grant, 10, { now: '2026-11-21T10:00:00.000Z' }))).ok);
    t.false((await docs.grants.charge(chargeOf(grant, 10, { now: '2026-11-22T00:00:00.000Z' }))).ok);
    t.is((await docs.grants.get(grant.id))?.usedTokens, 10);
  });

  it('only an active grant pays', async (docs, t) => {
    const grant = await docs.grants.create(newGrant());
    await docs.grants.setStatus(grant.id, 'replaced');
    t.false((await docs.grants.charge(chargeOf(grant, 10))).ok);
    await docs.grants.setStatus(grant.id, 'revoked');
    t.false((await docs.grants.charge(chargeOf(grant, 10))).ok);
  });

  it('the daily cap counts tokens of the current day and rolls over with the day key', async (docs, t) => {
    const grant = await docs.grants.create(newGrant({ dailyCap: 500 }));
    t.true((await docs.grants.charge(chargeOf(grant, 300))).ok);
    t.false((await docs.grants.charge(chargeOf(grant, 201))).ok);
    t.true((await docs.grants.charge(chargeOf(grant, 200))).ok);
    t.false((await docs.grants.charge(chargeOf(grant, 1))).ok);
    const next = await docs.grants.charge(chargeOf(grant, 450, { dayKey: '2026-11-22' }));
    t.true(next.ok);
    t.like(next.grant, { usedTokens: 950, dayKey: '2026-11-22', dayUsed: 450, weekUsed: 950 });
  });

  it('the weekly cap counts tokens of the current week and rolls over with the week key', async (docs, t) => {
    const grant = await docs.grants.create(newGrant({ weeklyCap: 1000, dailyCap: 800 }));
    t.true((await docs.grants.charge(chargeOf(grant, 700, { dayKey: '2026-11-20' }))).ok);
    t.false((await docs.grants.charge(chargeOf(grant, 301))).ok);
    t.true((await docs.grants.charge(chargeOf(grant, 300))).ok);
    const next = await docs.grants.charge(chargeOf(grant, 800, { dayKey: '2026-11-23', weekKey: '2026-W48' }));
    t.true(next.ok);
    t.like(next.grant, { usedTokens: 1800, weekKey: '2026-W48', weekUsed: 800, dayUsed: 800 });
  });

  it('a refund returns the tokens to the grant that paid and queues the refund entry', async (docs, t) => {
    const grant = await docs.grants.create(newGrant({ dailyCap: 1000, weeklyCap: 2000 }));
    const charge = chargeOf(grant, PRICE);
    await docs.grants.charge(charge);
    const refund = refundOf(charge);
    t.deepEqual(await docs.grants.refund(refund), { applied: true });
    t.like(await docs.grants.get(grant.id), { usedTokens: 0, dayUsed: 0, weekUsed: 0 });
    t.deepEqual(await outboxOf(docs, grant.id), [charge.entry, refund.entry]);
  });

  it('a refund is idempotent on the charge it returns, even when raced', async (docs, t) => {
    const grant = await docs.grants.create(newGrant());
    const charge = chargeOf(grant, PRICE);
    await docs.grants.charge(charge);
    await docs.grants.charge(chargeOf(grant, PRICE));
    const results = await Promise.all(Array.from({ length: 20 }, () => docs.grants.refund(refundOf(charge))));
    t.is(results.filter((r) => r.applied).length, 1);
    t.deepEqual(await docs.grants.refund(refundOf(charge)), { applied: false });
    t.is((await docs.grants.get(grant.id))?.usedTokens, PRICE);
    t.is((await outboxOf(docs, grant.id)).filter((e) => e.kind === 'refund').length, 1);
  });

  it('a refund never exceeds the charge', async (docs, t) => {
    const grant = await docs.grants.create(newGrant());
    await docs.grants.charge(chargeOf(grant, 500));
    const charge = chargeOf(grant, 100);
    await docs.grants.charge(charge);
    t.true((await docs.grants.refund(refundOf(charge, 400))).applied);
    t.is((await docs.grants.get(grant.id))?.usedTokens, 500);
    const [entry] = (await outboxOf(docs, grant.id)).filter((e) => e.kind === 'refund');
    t.is(entry?.tokens, 100);
  });

  it('a refund returns tokens to the cap window they were counted in, only while it is current', async (docs, t) => {
    const grant = await docs.grants.create(newGrant({ dailyCap: 1000, weeklyCap: 5000 }));
    const yesterday = chargeOf(grant, 400, { dayKey: '2026-11-20' });
    await docs.grants.charge(yesterday);
    await docs.grants.charge(chargeOf(grant, 300));
    t.true((await docs.grants.refund(refundOf(yesterday))).applied);
    // Yesterday's tokens left today's window alone but go back to this week's.
    t.like(await docs.grants.get(grant.id), { usedTokens: 300, dayKey: DAY, dayUsed: 300, weekUsed: 300 });
    const today = chargeOf(grant, 200);
    await docs.grants.charge(today);
    await docs.grants.refund(refundOf(today));
    t.like(await docs.grants.get(grant.id), { usedTokens: 300, dayUsed: 300, weekUsed: 300 });
  });

  it('the outbox hands out entries oldest first until they are marked published', async (docs, t) => {
    const grant = await docs.grants.create(newGrant());
    const charges = [chargeOf(grant, 1), chargeOf(grant, 2), chargeOf(grant, 3)];
    for (const c of charges) await docs.grants.charge(c);
    t.deepEqual(await docs.outbox.pending(2), [charges[0]!.entry, charges[1]!.entry]);
    await docs.outbox.markPublished([charges[0]!.entry.id]);
    t.deepEqual(await docs.outbox.pending(10), [charges[1]!.entry, charges[2]!.entry]);
    await docs.outbox.markPublished(charges.map((c) => c.entry.id));
    await docs.outbox.markPublished([]);
    t.deepEqual(await docs.outbox.pending(10), []);
  });

  it('the outbox entry and the grant update commit together or not at all', async (docs, t) => {
    const grant = await docs.grants.create(newGrant());
    const first = chargeOf(grant, 100);
    t.true((await docs.grants.charge(first)).ok);
    // Reusing a queued entry id makes the outbox write fail; the grant update must go with it.
    const clash = { ...chargeOf(grant, 50), entry: { ...first.entry, tokens: 50 } };
    t.false((await docs.grants.charge(clash)).ok);
    t.is((await docs.grants.get(grant.id))?.usedTokens, 100);
    t.deepEqual(await outboxOf(docs, grant.id), [first.entry]);
  });

  it('200 concurrent charges on a grant that can pay 37 of them: exactly 37 succeed', async (docs, t) => {
    const total = 37 * PRICE + PRICE - 1;
    const grant = await docs.grants.create(newGrant({ totalTokens: total }));
    const results = await Promise.all(Array.from({ length: 200 }, () => docs.grants.charge(chargeOf(grant, PRICE))));
    t.is(results.filter((r) => r.ok).length, 37);
    for (const r of results) t.true(r.grant !== null && r.grant.totalTokens - r.grant.usedTokens >= 0);
    const after = await docs.grants.get(grant.id);
    t.is(after?.usedTokens, 37 * PRICE);
    t.is((await outboxOf(docs, grant.id)).filter((e) => e.kind === 'charge').length, 37);
  });

  it('charges of one turn on one grant each answer the grant as their own charge left it', async (docs, t) => {
    const grant = await docs.grants.create(newGrant());
    const cmds = [100, 7, 55, 1, 30].map((tokens) => chargeOf(grant, tokens));
    const results = await Promise.all(cmds.map((cmd) => docs.grants.charge(cmd)));
    t.true(results.every((r) => r.ok));
    // Some order of the charges explains every answer: each saw the ones before it and its own, no later one.
    const seen = results.map((r, i) => ({ used: r.grant!.usedTokens, day: r.grant!.dayUsed, week: r.grant!.weekUsed, tokens: cmds[i].tokens })).sort((a, b) => a.used - b.used);
    let sum = 0;
    for (const s of seen) {
      sum += s.tokens;
      t.deepEqual([s.used, s.day, s.week], [sum, sum, sum]);
    }
    t.is((await docs.grants.get(grant.id))?.usedTokens, 193);
    t.deepEqual((await outboxOf(docs, grant.id)).map((e) => e.id).sort(), cmds.map((c) => c.entry.id).sort());
  });

  it('charges of one turn that together exceed the grant: each one that still fits lands', async (docs, t) => {
    const grant = await docs.grants.create(newGrant({ totalTokens: 250 }));
    const results = await Promise.all([100, 100, 100].map((tokens) => docs.grants.charge(chargeOf(grant, tokens))));
    t.is(results.filter((r) => r.ok).length, 2);
    t.is((await docs.grants.get(grant.id))?.usedTokens, 200);
    t.is((await outboxOf(docs, grant.id)).length, 2);
  });

  it('the same charge entry twice in one turn is counted once', async (docs, t) => {
    const grant = await docs.grants.create(newGrant());
    const cmd = chargeOf(grant, 100);
    const results = await Promise.all([docs.grants.charge(cmd), docs.grants.charge({ ...cmd })]);
    t.is(results.filter((r) => r.ok).length, 1);
    t.is((await docs.grants.get(grant.id))?.usedTokens, 100);
    t.deepEqual(await outboxOf(docs, grant.id), [cmd.entry]);
  });

  it('the ledger appends once per entry id and reconciles with grant usage', async (docs, t) => {
    const grant = await docs.grants.create(newGrant());
    const charges = Array.from({ length: 5 }, (_, i) => chargeOf(grant, 100 + i));
    for (const c of charges) await docs.grants.charge(c);
    await docs.grants.refund(refundOf(charges[1]!));
    await docs.grants.refund(refundOf(charges[3]!, 50));
    const pending = await outboxOf(docs, grant.id);
    for (const e of pending) t.true(await docs.ledger.append(e));
    for (const e of pending) t.false(await docs.ledger.append(e));
    await docs.outbox.markPublished(pending.map((e) => e.id));
    const sum = await docs.ledger.sumByGrant(grant.id);
    t.deepEqual(sum, { charged: 510, refunded: 151, entries: 7 });
    t.is(sum.charged - sum.refunded, (await docs.grants.get(grant.id))?.usedTokens ?? -1);
    // The port promises no order here; sorted ids compare the sets (ava compares Sets in iteration order).
    const ids = (entries: LedgerEntry[]) => entries.map((e) => e.id).sort();
    t.deepEqual(ids(await docs.ledger.listByGrant(grant.id)), ids(pending));
    t.deepEqual(await docs.ledger.sumByGrant('grant_none'), { charged: 0, refunded: 0, entries: 0 });
  });

  it('ledger sums over a window count entries with from <= at < to', async (docs, t) => {
    const grant = await docs.grants.create(newGrant());
    const at = ['2026-11-20T23:59:59.999Z', '2026-11-21T00:00:00.000Z', '2026-11-21T12:00:00.000Z', '2026-11-22T00:00:00.000Z'];
    const charges = at.map((now, i) => chargeOf(grant, 100 * (i + 1), { now }));
    for (const c of charges) t.true(await docs.ledger.append(c.entry));
    t.true(await docs.ledger.append({ ...refundOf(charges[2]!, 30).entry, at: '2026-11-21T13:00:00.000Z' }));
    const day = { from: '2026-11-21T00:00:00.000Z', to: '2026-11-22T00:00:00.000Z' };
    t.deepEqual(await docs.ledger.sumByGrant(grant.id, day), { charged: 500, refunded: 30, entries: 3 });
    t.deepEqual(await docs.ledger.sumByGrant(grant.id), { charged: 1000, refunded: 30, entries: 5 });
    t.deepEqual(await docs.ledger.sumByGrant(grant.id, { from: day.to, to: day.to }), { charged: 0, refunded: 0, entries: 0 });
  });

  it('ledger sums over a window leave out the entries of its exceptRoutes', async (docs, t) => {
    const grant = await docs.grants.create(newGrant());
    const request = chargeOf(grant, 100);
    const chapter = chargeOf(grant, 400);
    chapter.entry.route = 'audiobook';
    for (const c of [request, chapter]) t.true(await docs.ledger.append(c.entry));
    t.true(await docs.ledger.append({ ...refundOf(chapter, 40).entry }));
    const all = { from: '2000-01-01T00:00:00.000Z', to: '2100-01-01T00:00:00.000Z' };
    t.deepEqual(await docs.ledger.sumByGrant(grant.id, all), { charged: 500, refunded: 40, entries: 3 });
    t.deepEqual(await docs.ledger.sumByGrant(grant.id, { ...all, exceptRoutes: ['audiobook'] }), { charged: 100, refunded: 0, entries: 1 });
    t.deepEqual(await docs.ledger.sumByGrant(grant.id, { ...all, exceptRoutes: [] }), { charged: 500, refunded: 40, entries: 3 });
  });

  it('every grant is walked once, in id order, a page at a time', async (docs, t) => {
    const ids = Array.from({ length: 7 }, (_, i) => `grant_page_${randomUUID()}_${i}`);
    for (const id of ids) await docs.grants.create(newGrant({ id }));
    const seen: string[] = [];
    let after: string | null = null;
    for (;;) {
      const page: Grant[] = await docs.grants.listPage(after, 3);
      t.true(page.length <= 3);
      if (page.length === 0) break;
      seen.push(...page.map((g) => g.id));
      after = page[page.length - 1]!.id;
    }
    const ours = seen.filter((id) => ids.includes(id));
    t.deepEqual(ours, [...ids].sort());
    t.deepEqual(seen, [...seen].sort(), 'pages come in id order');
    t.is(new Set(seen).size, seen.length, 'no grant twice');
    const [first] = await docs.grants.listPage(null, 1);
    t.like(first, { usedTokens: 0, status: 'active' });
    t.deepEqual(await docs.grants.listPage(null, 0), []);
  });

  it('a held charge lands with its hold; the hold is an orphan only once its process stops beating, and goes on release', async (docs, t) => {
    const grant = await docs.grants.create(newGrant());
    const held = { ...chargeOf(grant, PRICE), holdFor: 'proc_a' };
    const other = { ...chargeOf(grant, PRICE), holdFor: 'proc_b' };
    const plain = chargeOf(grant, PRICE);
    for (const cmd of [held, other, plain]) t.true((await docs.grants.charge(cmd)).ok);
    // A charge that cannot land leaves no hold behind.
    t.false((await docs.grants.charge({ ...chargeOf(grant, 100_000), holdFor: 'proc_a' })).ok);
    const mine = async (nowMs: number) => (await docs.holds.orphaned(nowMs, 100)).filter((e) => e.grantId === grant.id);
    // No beat yet: every hold is an orphan (a process that died before its first beat).
    t.deepEqual((await mine(1_000)).map((e) => e.id).sort(), [held.entry.id, other.entry.id].sort());
    t.like((await mine(1_000)).find((e) => e.id === held.entry.id), { kind: 'charge', tokens: PRICE, dayKey: DAY, weekKey: WEEK, requestId: held.entry.requestId });
    await docs.holds.beat('proc_a', 5_000);
    await docs.holds.beat('proc_b', 3_000);
    t.deepEqual(await mine(2_000), [], 'both processes are within their beats');
    t.deepEqual((await mine(4_000)).map((e) => e.id), [other.entry.id], 'proc_b went quiet');
    await docs.holds.beat('proc_b', 9_000);
    t.deepEqual(await mine(4_000), [], 'a later beat renews');
    t.deepEqual((await mine(9_000)).map((e) => e.id).sort(), [held.entry.id, other.entry.id].sort());
    t.is((await docs.holds.orphaned(9_000, 1)).length, 1, 'at most limit');
    await docs.holds.release([{ grantId: grant.id, chargeId: held.entry.id }]);
    t.deepEqual((await mine(9_000)).map((e) => e.id), [other.entry.id]);
    // A beat a day later forgets proc_b's old beat; its hold is an orphan still, nothing else moved.
    const dayLater = 9_000 + 24 * 3600 * 1000 + 1;
    await docs.holds.beat('proc_a', dayLater + 5_000);
    t.deepEqual((await mine(dayLater)).map((e) => e.id), [other.entry.id]);
    await docs.holds.release([{ grantId: grant.id, chargeId: other.entry.id }, { grantId: grant.id, chargeId: 'chg_unknown' }]);
    t.deepEqual(await mine(9_000), []);
    t.is((await docs.grants.get(grant.id))?.usedTokens, 3 * PRICE, 'holds change no numbers');
  });

  it('spilled bus messages wait oldest first, once per topic and id, until removed', async (docs, t) => {
    const topic = `spill.${randomUUID().slice(0, 8)}`;
    const message = (id: string, topicName = topic) => ({ topic: topicName, id, key: 'acc_1', value: { id, nested: { tokens: 12, at: null } } });
    const mine = async () => (await docs.spill.pending(100)).filter((m) => m.topic === topic || m.topic === `${topic}.other`);
    await docs.spill.add([message('a'), message('b')]);
    await docs.spill.add([message('c'), message('a'), message('a', `${topic}.other`)]);
    await docs.spill.add([]);
    t.deepEqual(await mine(), [message('a'), message('b'), message('c'), message('a', `${topic}.other`)], 'in the order spilled; "a" again is one message, in another topic another');
    t.is((await docs.spill.pending(2)).length, 2, 'at most limit');
    await docs.spill.remove([{ topic, id: 'a' }, { topic, id: 'unknown' }]);
    t.deepEqual((await mine()).map((m) => [m.topic, m.id]), [[topic, 'b'], [topic, 'c'], [`${topic}.other`, 'a']], 'only that topic\'s "a" went');
    await docs.spill.add([message('a')]);
    t.deepEqual((await mine()).map((m) => m.id), ['b', 'c', 'a', 'a'], 'a removed message spilled again waits at the end');
    await docs.spill.remove((await mine()).map(({ topic: name, id }) => ({ topic: name, id })));
    await docs.spill.remove([]);
    t.deepEqual(await mine(), []);
  });

  it('held charges of one turn each land with their hold (MongoDB writes them as one update)', async (docs, t) => {
    const grant = await docs.grants.create(newGrant());
    t.true((await docs.grants.charge(chargeOf(grant, 10))).ok); // opens the day and week windows
    const burst = Array.from({ length: 6 }, (_, i) => ({ ...chargeOf(grant, 10), holdFor: i % 2 ? 'proc_a' : undefined }));
    t.true((await Promise.all(burst.map((cmd) => docs.grants.charge(cmd)))).every((r) => r.ok));
    const held = (await docs.holds.orphaned(Date.now(), 100)).filter((e) => e.grantId === grant.id).map((e) => e.id).sort();
    t.deepEqual(held, burst.filter((cmd) => cmd.holdFor).map((cmd) => cmd.entry.id).sort());
    t.is((await docs.grants.get(grant.id))?.usedTokens, 70);
  });

  it('cloned voices are stored and listed per account', async (docs, t) => {
    const clone = {
      id: `clone_${randomUUID()}`, accountId: 'acct_c', name: 'Lan', engine: 'v4',
      referenceAvailable: true, baseVoiceId: 'vi_female_north', createdAt: NOW,
    };
    await docs.clones.create(clone);
    await docs.clones.create({ ...clone, id: `clone_${randomUUID()}`, engine: 'v3', referenceAvailable: false, createdAt: '2026-11-22T00:00:00.000Z' });
    t.deepEqual(await docs.clones.get(clone.id), clone);
    t.deepEqual((await docs.clones.listByAccount('acct_c')).map((c) => [c.engine, c.referenceAvailable]), [['v4', true], ['v3', false]]);
    t.is(await docs.clones.get('clone_missing'), null);
    await t.notThrowsAsync(docs.ping());
  });
}

documentsContract('sqlite (memory)', async () => {
  const db = openMemoryDb();
  return { docs: createSqliteDocuments(db), close: async () => void db.close() };
});

documentsContract('sqlite (file)', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'docs-contract-'));
  const db = openEmbeddedDb(dir);
  return {
    docs: createSqliteDocuments(db),
    close: async () => {
      db.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

test('sqlite (file): a file made before keys recorded their last use gets the column on open', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'docs-contract-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const old = openEmbeddedDb(dir);
  old.exec(`CREATE TABLE api_keys (id TEXT PRIMARY KEY, account_id TEXT NOT NULL, grant_id TEXT NOT NULL, kind TEXT NOT NULL, hash TEXT NOT NULL UNIQUE,
    prefix TEXT NOT NULL, name TEXT, created_at TEXT NOT NULL, revoked_at TEXT)`);
  old.prepare("INSERT INTO api_keys VALUES ('key_old', 'acct_o', 'grant_o', 'live', 'hash_old', 'vn_sk_oo', NULL, ?, NULL)").run(NOW);
  old.close();
  const db = openEmbeddedDb(dir);
  t.teardown(() => db.close());
  const docs = createSqliteDocuments(db);
  t.is((await docs.keys.get('key_old'))?.lastUsedAt, null);
  await docs.keys.touch('key_old', NOW);
  t.is((await docs.keys.get('key_old'))?.lastUsedAt, NOW);
});

test('sqlite (file): two connections to one file never overspend a grant', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'docs-contract-'));
  const [a, b] = [openEmbeddedDb(dir), openEmbeddedDb(dir)];
  t.teardown(async () => {
    a.close();
    b.close();
    await rm(dir, { recursive: true, force: true });
  });
  const [docsA, docsB] = [createSqliteDocuments(a), createSqliteDocuments(b)];
  const grant = await docsA.grants.create(newGrant({ totalTokens: 10 * PRICE }));
  const results = await Promise.all(
    Array.from({ length: 30 }, (_, i) => (i % 2 ? docsA : docsB).grants.charge(chargeOf(grant, PRICE))),
  );
  t.is(results.filter((r) => r.ok).length, 10);
  t.is((await docsB.grants.get(grant.id))?.usedTokens, 10 * PRICE);
});

const mongoUrl = process.env.MONGODB_URL;
if (mongoUrl) {
  // ava wants tests declared synchronously; the driver connects on the first operation.
  const client = new MongoClient(mongoUrl);
  test.after.always(() => client.close());
  documentsContract('mongo', async () => {
    const dbName = `contract_docs_${randomUUID().slice(0, 8)}`;
    const docs = await createMongoDocuments(client, dbName);
    return { docs, close: async () => void (await client.db(dbName).dropDatabase()) };
  });

  test('mongo: the charges of one turn on one grant are one write of the grant document', async (t) => {
    const watched = new MongoClient(mongoUrl, { monitorCommands: true });
    const dbName = `contract_docs_${randomUUID().slice(0, 8)}`;
    t.teardown(async () => {
      await watched.db(dbName).dropDatabase();
      await watched.close();
    });
    const docs = await createMongoDocuments(watched, dbName);
    const grant = await docs.grants.create(newGrant());
    // The first charge of the day opens the grant's day and week windows; the burst is counted in them.
    t.true((await docs.grants.charge(chargeOf(grant, 10))).ok);
    let writes = 0;
    watched.on('commandStarted', (e) => { if (e.commandName === 'findAndModify') writes++; });
    const results = await Promise.all(Array.from({ length: 20 }, () => docs.grants.charge(chargeOf(grant, 10))));
    t.true(results.every((r) => r.ok));
    t.is(writes, 1);
    t.is((await docs.grants.get(grant.id))?.usedTokens, 210);
  });

  test('mongo: a grant whose outbox is full (the bus behind) refuses charges with 503, charging nothing, until the relay takes the entries; refunds still land', async (t) => {
    const dbName = `contract_docs_${randomUUID().slice(0, 8)}`;
    t.teardown(async () => void (await client.db(dbName).dropDatabase()));
    const docs = await createMongoDocuments(client, dbName, { outboxLimit: 3 });
    const grant = await docs.grants.create(newGrant());
    const charges = [chargeOf(grant, 10), chargeOf(grant, 10), chargeOf(grant, 10)];
    for (const cmd of charges) t.true((await docs.grants.charge(cmd)).ok);
    const refused = await docs.grants.charge(chargeOf(grant, 10)).then(() => null, (err: unknown) => err);
    t.true(refused instanceof DomainError, 'refused, not charged as lost');
    t.like(refused, { kind: 'unavailable', details: { code: 'SERVICE_UNAVAILABLE', retryAfterSeconds: 5 } });
    const burst = await Promise.allSettled(Array.from({ length: 5 }, () => docs.grants.charge(chargeOf(grant, 10))));
    t.true(burst.every((r) => r.status === 'rejected'), 'a turn of charges together is refused as well');
    t.is((await docs.grants.get(grant.id))?.usedTokens, 30, 'nothing charged beyond the room');
    t.true((await docs.grants.refund(refundOf(charges[0]!))).applied, 'a refund is never held back');
    // The relay publishes what waits: the grant takes charges again.
    const pending = await docs.outbox.pending(100);
    await docs.outbox.markPublished(pending.filter((e) => e.grantId === grant.id).map((e) => e.id));
    t.true((await docs.grants.charge(chargeOf(grant, 10))).ok);
    t.is((await docs.grants.get(grant.id))?.usedTokens, 30);
  });
} else {
  console.log('documents contract: MongoDB adapter skipped, MONGODB_URL is not set');
}
