import test from 'ava';
import type { Grant } from '../../core/ports/documents.ts';
import { assessGrant, payerCandidates, spendableNow } from '../../core/billing/assessment.ts';
import { refusalFor } from '../../core/billing/refusals.ts';
import { capWindows } from '../../core/billing/windows.ts';
import { toApiError } from '../../core/http/envelopes.ts';

const NOW = new Date('2026-11-21T05:00:00Z');
const W = capWindows(NOW, 420);

function grant(over: Partial<Grant> = {}): Grant {
  return {
    id: 'g1', accountId: 'a1', plan: 'pro', totalTokens: 10_000, usedTokens: 0, dailyCap: null, weeklyCap: null,
    dayKey: null, dayUsed: 0, weekKey: null, weekUsed: 0, expiresAt: '2027-01-01T00:00:00Z', isGift: false,
    engines: ['v4'], status: 'active', createdAt: '2026-01-01T00:00:00Z', ...over,
  };
}

const CASES: Array<[string, Partial<Grant>, number, boolean, string | null]> = [
  ['a grant with enough tokens pays', {}, 195, true, null],
  ['exactly enough tokens pays', { usedTokens: 10_000 - 195 }, 195, true, null],
  ['one token short is exhausted', { usedTokens: 10_000 - 194 }, 195, false, 'exhausted'],
  ['nothing left is used up', { usedTokens: 10_000 }, 195, false, 'used_up'],
  ['past expiry is expired', { expiresAt: '2026-11-01T00:00:00Z' }, 195, false, 'expired'],
  ['a gift never expires', { isGift: true, expiresAt: '2026-11-01T00:00:00Z' }, 195, true, null],
  ['a replaced grant is inactive', { status: 'replaced' }, 195, false, 'inactive'],
  ['a grant without the engine cannot pay', { engines: ['v5'] }, 195, false, 'engine'],
  ['daily cap reached in the current window', { dailyCap: 1000, dayKey: W.dayKey, dayUsed: 900 }, 195, false, 'daily'],
  ['daily cap of a past day does not count (roll-over)', { dailyCap: 1000, dayKey: '2026-11-20', dayUsed: 1000 }, 195, true, null],
  ['weekly cap reached in the current window', { weeklyCap: 2000, weekKey: W.weekKey, weekUsed: 1900 }, 195, false, 'weekly'],
  ['weekly cap of a past week does not count', { weeklyCap: 2000, weekKey: 'W2026-11-09', weekUsed: 2000 }, 195, true, null],
  ['daily and weekly caps both short: the week binds, it reopens last', { dailyCap: 1000, dayKey: W.dayKey, dayUsed: 900, weeklyCap: 2000, weekKey: W.weekKey, weekUsed: 1900 }, 195, false, 'weekly'],
  ['daily cap short, the week still has room: the day binds', { dailyCap: 1000, dayKey: W.dayKey, dayUsed: 900, weeklyCap: 2000, weekKey: W.weekKey, weekUsed: 1000 }, 195, false, 'daily'],
  ['weekly cap short, the day still has room', { dailyCap: 1000, dayKey: W.dayKey, dayUsed: 100, weeklyCap: 2000, weekKey: W.weekKey, weekUsed: 1900 }, 195, false, 'weekly'],
  ['a gift has no daily cap whatever the record says', { isGift: true, dailyCap: 10, dayKey: W.dayKey, dayUsed: 10 }, 195, true, null],
];

for (const [rule, over, tokens, canPay, reason] of CASES) {
  test(`assess: ${rule}`, (t) => {
    const a = assessGrant(grant(over), tokens, 'v4', NOW, W);
    t.is(a.canPay, canPay);
    if (!a.canPay) t.is(a.reason as string | null, reason);
  });
}

test('spendable now is the tightest of tokens left, daily and weekly remainders', (t) => {
  t.is(spendableNow(grant({ usedTokens: 2000, dailyCap: 5000, dayKey: W.dayKey, dayUsed: 4000 }), NOW, W), 1000);
  t.is(spendableNow(grant({ weeklyCap: 3000, weekKey: W.weekKey, weekUsed: 2500 }), NOW, W), 500);
  t.is(spendableNow(grant({ expiresAt: '2026-01-02T00:00:00Z' }), NOW, W), 0);
});

test("payers: the key's own grant first, then other active grants covering the engine, oldest first", (t) => {
  const own = grant({ id: 'own', createdAt: '2026-06-01T00:00:00Z' });
  const old = grant({ id: 'old', createdAt: '2026-02-01T00:00:00Z' });
  const older = grant({ id: 'older', createdAt: '2026-01-01T00:00:00Z' });
  const otherEngine = grant({ id: 'v5only', engines: ['v5'], createdAt: '2025-01-01T00:00:00Z' });
  const expired = grant({ id: 'expired', expiresAt: '2026-02-01T00:00:00Z', createdAt: '2025-01-01T00:00:00Z' });
  t.deepEqual(payerCandidates(own, [old, own, older, otherEngine, expired], 'v4', NOW).map((g) => g.id), ['own', 'older', 'old']);
});

const REFUSALS: Array<[string, Partial<Grant>, boolean, number, string]> = [
  ['own grant expired, no other grant: GRANT_INACTIVE', { expiresAt: '2026-11-01T00:00:00Z' }, false, 403, 'GRANT_INACTIVE'],
  ['own grant used up, no other grant: GRANT_INACTIVE', { usedTokens: 10_000 }, false, 403, 'GRANT_INACTIVE'],
  ['own grant replaced, no other grant: GRANT_INACTIVE', { status: 'replaced' }, false, 403, 'GRANT_INACTIVE'],
  ['own grant expired, others exist but cannot pay: GRANT_EXPIRED', { expiresAt: '2026-11-01T00:00:00Z' }, true, 403, 'GRANT_EXPIRED'],
  ['own grant short of tokens: GRANT_TOKENS_EXHAUSTED', { usedTokens: 9_900 }, false, 403, 'GRANT_TOKENS_EXHAUSTED'],
  ['daily cap spent: GRANT_DAILY_LIMIT (429)', { dailyCap: 100, dayKey: W.dayKey, dayUsed: 100 }, false, 429, 'GRANT_DAILY_LIMIT'],
  ['weekly cap spent: GRANT_WEEKLY_LIMIT (429)', { weeklyCap: 100, weekKey: W.weekKey, weekUsed: 50 }, false, 429, 'GRANT_WEEKLY_LIMIT'],
  ['daily and weekly caps both spent: GRANT_WEEKLY_LIMIT (429), not the daily one', { dailyCap: 100, dayKey: W.dayKey, dayUsed: 100, weeklyCap: 300, weekKey: W.weekKey, weekUsed: 300 }, false, 429, 'GRANT_WEEKLY_LIMIT'],
];

for (const [rule, over, othersExist, status, code] of REFUSALS) {
  test(`refusal: ${rule}`, (t) => {
    const err = toApiError(refusalFor(assessGrant(grant(over), 195, 'v4', NOW, W), othersExist, 195));
    t.is(err.status, status);
    t.is(err.code, code);
  });
}

test('GRANT_EXPIRED carries no required field; exhausted carries remaining and required', (t) => {
  const expired = toApiError(refusalFor(assessGrant(grant({ expiresAt: '2026-11-01T00:00:00Z' }), 195, 'v4', NOW, W), true, 195));
  t.is(expired.fields.required, undefined);
  const short = toApiError(refusalFor(assessGrant(grant({ usedTokens: 9_900 }), 195, 'v4', NOW, W), false, 195));
  t.is(short.fields.remaining, 100);
  t.is(short.fields.required, 195);
});

test('remaining is what the refusing limit has left: a grant short of tokens reports its balance even when its daily cap has less; a daily refusal its day\'s rest; with the week short too, the week refuses with its own rest', (t) => {
  const short = toApiError(refusalFor(assessGrant(grant({ totalTokens: 5000, usedTokens: 266, dailyCap: 300, dayKey: W.dayKey, dayUsed: 266 }), 6240, 'v4', NOW, W), false, 6240));
  t.like(short, { code: 'GRANT_TOKENS_EXHAUSTED', fields: { remaining: 4734, required: 6240 } });
  const daily = toApiError(refusalFor(assessGrant(grant({ dailyCap: 300, dayKey: W.dayKey, dayUsed: 100, weeklyCap: 1000, weekKey: W.weekKey, weekUsed: 500 }), 250, 'v4', NOW, W), false, 250));
  t.like(daily, { code: 'GRANT_DAILY_LIMIT', fields: { remaining: 200 } });
  const both = toApiError(refusalFor(assessGrant(grant({ dailyCap: 300, dayKey: W.dayKey, dayUsed: 290, weeklyCap: 1000, weekKey: W.weekKey, weekUsed: 900 }), 150, 'v4', NOW, W), false, 150));
  t.like(both, { code: 'GRANT_WEEKLY_LIMIT', fields: { remaining: 100 } }, 'both caps short: the week refuses, with its own rest');
  const weekOnly = toApiError(refusalFor(assessGrant(grant({ weeklyCap: 1000, weekKey: W.weekKey, weekUsed: 900 }), 150, 'v4', NOW, W), false, 150));
  t.like(weekOnly, { code: 'GRANT_WEEKLY_LIMIT', fields: { remaining: 100 } });
});

test('daily limit carries resetAt, remaining and required, and no Retry-After', (t) => {
  const err = toApiError(refusalFor(assessGrant(grant({ dailyCap: 300, dayKey: W.dayKey, dayUsed: 200 }), 195, 'v4', NOW, W), false, 195));
  t.is(err.fields.resetAt, W.dayResetAt);
  t.is(err.fields.remaining, 100);
  t.is(err.fields.required, 195);
  t.is(err.fields.retryAfterSeconds, undefined);
});

test('SPEC GRANT_DAILY_LIMIT "wait until resetAt": when the weekly cap is short too, the refusal is GRANT_WEEKLY_LIMIT with the weekly resetAt, so waiting for it is not refused again', (t) => {
  t.true(W.weekResetAt > W.dayResetAt, 'NOW is not a Sunday: the two resets differ');
  const capped = { dailyCap: 300, dayKey: W.dayKey, dayUsed: 195, weeklyCap: 250, weekKey: W.weekKey, weekUsed: 195 };
  const err = toApiError(refusalFor(assessGrant(grant(capped), 195, 'v4', NOW, W), false, 195));
  t.like(err, { status: 429, code: 'GRANT_WEEKLY_LIMIT', fields: { resetAt: W.weekResetAt, remaining: 55, required: 195 } });
  // At the daily reset the day's use is gone but the week's is not: the grant still cannot pay.
  const atDayReset = new Date(W.dayResetAt);
  const next = capWindows(atDayReset, 420);
  t.is(next.weekKey, W.weekKey);
  t.false(assessGrant(grant(capped), 195, 'v4', atDayReset, next).canPay);
});
