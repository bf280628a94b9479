import test from 'ava';
import { countCharacters, priceTokens, billedCharacters } from '../../core/billing/pricing.ts';
import { capWindows } from '../../core/billing/windows.ts';

const price = (characters: number, aiRefine = false, surcharge = 0.5) =>
  priceTokens({ characters, engineMultiplier: 3, globalMultiplier: 1.3, aiRefine, aiRefineSurchargePerChar: surcharge });

const PRICES: Array<[string, number, boolean, number]> = [
  ['minimum 50 characters per request: 1 char bills as 50', 1, false, 195],
  ['minimum 50 characters per request: 0 chars bills as 50', 0, false, 195],
  ['50 x 3 x 1.3 is exactly 195 (float noise removed)', 50, false, 195],
  ['51 characters: 198.9 rounds up to 199', 51, false, 199],
  ['100 characters: 390', 100, false, 390],
  ['1000 characters: 3900', 1000, false, 3900],
  ['50000 characters: 195000', 50000, false, 195000],
  ['aiRefine adds ceil(chars x surcharge): 50 chars + 25', 50, true, 220],
  ['aiRefine on 101 chars: 394 + 51', 101, true, 394 + 51],
  ['aiRefine surcharge also uses the 50 minimum', 10, true, 195 + 25],
];

for (const [rule, chars, ai, expected] of PRICES) {
  test(`price: ${rule}`, (t) => {
    t.is(price(chars, ai), expected);
  });
}

test('characters are counted after NFC normalisation', (t) => {
  const decomposed = 'Tie\u0302\u0301ng Vie\u0323\u0302t'; // "Tiếng Việt" in NFD
  t.is(countCharacters(decomposed), 10);
  t.is(countCharacters('Tiếng Việt'), 10);
});

test('characters count code points, not UTF-16 units', (t) => {
  t.is(countCharacters('😀😀'), 2);
});

test('billed characters: at least 50', (t) => {
  t.is(billedCharacters(3), 50);
  t.is(billedCharacters(70), 70);
});

const WINDOWS: Array<[string, string, string, string, string, string]> = [
  ['midday Saturday in Vietnam', '2026-11-21T05:00:00Z', '2026-11-21', 'W2026-11-16', '2026-11-21T17:00:00.000Z', '2026-11-22T17:00:00.000Z'],
  ['just before local midnight (16:59 UTC)', '2026-11-21T16:59:59Z', '2026-11-21', 'W2026-11-16', '2026-11-21T17:00:00.000Z', '2026-11-22T17:00:00.000Z'],
  ['local midnight rolls the day (17:00 UTC)', '2026-11-21T17:00:00Z', '2026-11-22', 'W2026-11-16', '2026-11-22T17:00:00.000Z', '2026-11-22T17:00:00.000Z'],
  ['Monday 00:00 local starts a new week', '2026-11-22T17:00:00Z', '2026-11-23', 'W2026-11-23', '2026-11-23T17:00:00.000Z', '2026-11-29T17:00:00.000Z'],
  ['Sunday late local time is still the old week', '2026-11-22T16:00:00Z', '2026-11-22', 'W2026-11-16', '2026-11-22T17:00:00.000Z', '2026-11-22T17:00:00.000Z'],
  ['year boundary', '2026-12-31T18:00:00Z', '2027-01-01', 'W2026-12-28', '2027-01-01T17:00:00.000Z', '2027-01-03T17:00:00.000Z'],
];

for (const [rule, now, day, week, dayReset, weekReset] of WINDOWS) {
  test(`cap windows (UTC+7, week starts Monday): ${rule}`, (t) => {
    const w = capWindows(new Date(now), 420);
    t.is(w.dayKey, day);
    t.is(w.weekKey, week);
    t.is(w.dayResetAt, dayReset);
    t.is(w.weekResetAt, weekReset);
  });
}
