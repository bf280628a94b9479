import test from 'ava';
import { isoTimeMs } from '../../core/iso-time.ts';

const same = (iso: string) => test(`isoTimeMs reads ${JSON.stringify(iso)} as Date.parse does`, (t) => {
  t.is(Object.is(isoTimeMs(iso), Date.parse(iso)) || (Number.isNaN(isoTimeMs(iso)) && Number.isNaN(Date.parse(iso))), true,
    `isoTimeMs ${isoTimeMs(iso)}, Date.parse ${Date.parse(iso)}`);
});

// The shape toISOString writes, at its edges (years 0 to 99 included: Date.UTC would read them as 1900 to 1999).
for (const iso of ['2026-11-28T10:40:05.123Z', '1970-01-01T00:00:00.000Z', '0000-01-01T00:00:00.000Z', '0099-12-28T00:00:00.000Z', '0100-01-01T00:00:00.000Z', '9999-12-28T23:59:59.999Z',
  '2024-02-28T12:00:00.000Z', '1969-12-31T23:59:59.999Z']) same(iso);
// Days past the 28th are left to Date.parse (month lengths, leap years), valid or not.
for (const iso of ['2024-02-29T00:00:00.000Z', '2023-02-29T00:00:00.000Z', '2026-04-31T00:00:00.000Z', '2026-12-31T23:59:59.999Z']) same(iso);
// Out of range or not digits: whatever Date.parse says (NaN for all of these in V8).
for (const iso of ['2026-13-01T00:00:00.000Z', '2026-00-10T00:00:00.000Z', '2026-11-00T00:00:00.000Z', '2026-11-28T24:00:00.000Z',
  '2026-11-28T10:60:00.000Z', '2026-11-28T10:00:60.000Z', '2026-1a-28T10:00:00.000Z', '2026-11-28T10:00:00.00aZ',
  '+2026-11-28T10:00:00.000Z', ' 026-11-28T10:00:00.000Z']) same(iso);
// Other shapes go to Date.parse unchanged.
for (const iso of ['2026-11-28T10:40:05Z', '2026-11-28T10:40:05.123+07:00', '2026-11-28', 'not a time', '', '+002026-11-28T10:40:05.123Z']) same(iso);

test('isoTimeMs agrees with Date.parse on the toISOString of random times from year 0 to 9999', (t) => {
  // Year 0 to year 9999, the years toISOString writes with four digits.
  const first = Date.parse('0000-01-01T00:00:00.000Z');
  const last = Date.parse('9999-12-31T23:59:59.999Z');
  for (let i = 0; i < 20_000; i++) {
    const iso = new Date(first + Math.floor(Math.random() * (last - first))).toISOString();
    if (isoTimeMs(iso) !== Date.parse(iso)) t.fail(`${iso}: ${isoTimeMs(iso)} vs ${Date.parse(iso)}`);
  }
  t.pass();
});
