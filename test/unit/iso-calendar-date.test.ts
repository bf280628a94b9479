/**
 * README, Accounts, keys and grants: a grant's `expiresAt` (and `GET /usage`
 * `from` and `to`) is the UTC instant it names, whatever offset it came with,
 * and a date alone or a date-time without an offset is read as UTC, whatever
 * the host's time zone.
 */
import test from 'ava';
import Joi from 'joi';
import { isoCalendarDate, validate } from '../../core/http/validate.ts';

const schema = Joi.object({ at: isoCalendarDate() });
const read = (at: string) => validate(schema, { at }).at as Date;

/** Runs `fn` with the process's time zone set to `tz` (Node applies a change of TZ at once). */
function inTimeZone<T>(tz: string, fn: () => T): T {
  const before = process.env.TZ;
  process.env.TZ = tz;
  try {
    return fn();
  } finally {
    if (before === undefined) delete process.env.TZ;
    else process.env.TZ = before;
  }
}

test('the host time zone is switched for these tests (a local reading of a date-time differs from UTC in it)', (t) => {
  inTimeZone('Asia/Ho_Chi_Minh', () => t.is(new Date('2027-01-31T00:00:00').toISOString(), '2027-01-30T17:00:00.000Z'));
});

const CASES: Array<[string, string]> = [
  ['2027-01-31', '2027-01-31T00:00:00.000Z'],
  ['2027-01-31T00:00:00', '2027-01-31T00:00:00.000Z'],
  ['2027-01-31T00:00', '2027-01-31T00:00:00.000Z'],
  ['2027-01-31 08:30:00', '2027-01-31T08:30:00.000Z'],
  ['2027-01-31T00:00:00.250', '2027-01-31T00:00:00.250Z'],
  ['2027-01-31T00:00:00Z', '2027-01-31T00:00:00.000Z'],
  ['2027-01-31T10:00:00+07:00', '2027-01-31T03:00:00.000Z'],
  ['2027-01-31T10:00:00-0300', '2027-01-31T13:00:00.000Z'],
];

for (const [input, instant] of CASES) {
  test(`a date-time without an offset is read as UTC, like a date alone, whatever the host's TZ: ${input}`, (t) => {
    for (const tz of ['UTC', 'Asia/Ho_Chi_Minh', 'America/New_York']) {
      t.is(inTimeZone(tz, () => read(input)).toISOString(), instant, tz);
    }
  });
}

test('a day the calendar does not have is still refused, with or without a time', (t) => {
  for (const input of ['2026-02-30', '2026-02-30T00:00:00', '2027-02-29T12:00:00Z']) {
    t.throws(() => read(input), { message: /ISO 8601/ }, input);
  }
  t.is(read('2028-02-29T12:00:00').toISOString(), '2028-02-29T12:00:00.000Z');
});
