import test from 'ava';
import { canPay, grantsAfterEach } from '../../core/adapters/documents/mongo-billing.ts';
import type { Grant, LedgerEntry } from '../../core/ports/documents.ts';

const NOW_MS = Date.parse('2026-11-21T10:00:00.000Z');
const current = { day: true, week: true };

const grant = (overrides: Partial<Grant> = {}): Grant => ({
  id: 'grant_1', accountId: 'acct_1', plan: 'pro', totalTokens: 1_000, usedTokens: 400,
  dailyCap: null, weeklyCap: null, dayKey: '2026-11-21', dayUsed: 100, weekKey: '2026-W47', weekUsed: 300,
  expiresAt: null, isGift: false, engines: ['v4'], status: 'active', createdAt: '2026-11-01T00:00:00.000Z',
  ...overrides,
});

const cases: Array<[string, Grant, number, { day: boolean; week: boolean }, boolean]> = [
  ['what is left pays exactly', grant(), 600, current, true],
  ['one token more than is left is refused', grant(), 601, current, false],
  ['an inactive grant pays nothing', grant({ status: 'suspended' as Grant['status'] }), 1, current, false],
  ['a grant expiring at the charge time pays nothing', grant({ expiresAt: '2026-11-21T10:00:00.000Z' }), 1, current, false],
  ['a grant expiring after the charge time pays', grant({ expiresAt: '2026-11-21T10:00:00.001Z' }), 1, current, true],
  ['the daily cap counts the current day', grant({ dailyCap: 150 }), 51, current, false],
  ['the daily cap counts the current day, up to it', grant({ dailyCap: 150 }), 50, current, true],
  ['a rolled-over day starts from zero', grant({ dailyCap: 150 }), 150, { day: false, week: true }, true],
  ['the weekly cap counts the current week', grant({ weeklyCap: 350 }), 51, current, false],
  ['a rolled-over week starts from zero', grant({ weeklyCap: 350 }), 350, { day: true, week: false }, true],
];

for (const [rule, g, tokens, windows, expected] of cases) {
  test(`canPay (the charge filter on a grant as read): ${rule}`, (t) => {
    t.is(canPay(g, { tokens }, NOW_MS, windows), expected);
  });
}

test('grantsAfterEach: each charge of a write sees the ones before it and its own, none after', (t) => {
  const entry = (tokens: number) => ({ tokens }) as LedgerEntry;
  const after = grant({ usedTokens: 460, dayUsed: 160, weekUsed: 360 });
  const each = grantsAfterEach(after, { entries: [entry(10), entry(20), entry(30)] });
  t.deepEqual(each.map((g) => [g.usedTokens, g.dayUsed, g.weekUsed]), [[410, 110, 310], [430, 130, 330], [460, 160, 360]]);
  t.not(each[0].engines, after.engines);
});
