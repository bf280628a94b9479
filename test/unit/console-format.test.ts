import test from 'ava';
import { fill, formatSeconds, lockMinutes, message } from '../../plugins/console/web/src/format.ts';

/**
 * The console's texts without a browser: durations that carry into the next
 * minute and speak the page's language, plural forms in English (Vietnamese
 * has one form), and the minutes told for a sign-in lockout.
 */

test('durations: a tenth of a second under a minute, then whole seconds that carry into minutes and hours', (t) => {
  t.is(formatSeconds('en', 0), '0 s');
  t.is(formatSeconds('en', 7.64), '7.6 s');
  t.is(formatSeconds('en', 59.5), '59.5 s');
  t.is(formatSeconds('en', 59.94), '59.9 s');
  t.is(formatSeconds('en', 59.96), '1 min 0 s', 'rounds to 60.0: a minute, not "60 s"');
  t.is(formatSeconds('en', 60), '1 min 0 s');
  t.is(formatSeconds('en', 119.4), '1 min 59 s');
  t.is(formatSeconds('en', 119.6), '2 min 0 s', 'never "1 min 60 s"');
  t.is(formatSeconds('en', 179.843), '3 min 0 s', 'the probe\'s total: never "2 min 60 s"');
  t.is(formatSeconds('en', 3599.5), '1 h 0 min 0 s');
  t.is(formatSeconds('en', 3725), '1 h 2 min 5 s');
  t.is(formatSeconds('en', 36_000_000), '10,000 h 0 min 0 s');
});

test('durations in Vietnamese: its units and its decimal comma', (t) => {
  t.is(formatSeconds('vi', 0), '0 giây');
  t.is(formatSeconds('vi', 59.5), '59,5 giây');
  t.is(formatSeconds('vi', 119.6), '2 phút 0 giây');
  t.is(formatSeconds('vi', 179.843), '3 phút 0 giây');
  t.is(formatSeconds('vi', 3725), '1 giờ 2 phút 5 giây');
  t.notRegex(formatSeconds('vi', 125), /\b(min|s)\b/);
});

test('durations: nothing to show is a dash (an <audio> with no length yet is NaN or Infinity)', (t) => {
  for (const value of [null, undefined, Number.NaN, Number.POSITIVE_INFINITY, -1]) t.is(formatSeconds('en', value), '—');
});

test('plural forms: English says "1 voice matches", Vietnamese has one form', (t) => {
  t.is(message('en', 'playground.found', { count: 1 }), '1 voice matches');
  t.is(message('en', 'playground.found', { count: 0 }), '0 voices match');
  t.is(message('en', 'playground.found', { count: 3 }), '3 voices match');
  t.is(message('en', 'playground.voiceCount', { count: 1 }), '1 voice');
  t.is(message('en', 'signin.locked', { minutes: 1 }), 'Too many failed sign-ins: this user is locked. Try again in 1 minute.');
  t.is(message('en', 'signin.limited', { seconds: 1 }), 'Too many sign-in attempts. Try again in 1 second.');
  t.is(message('en', 'usage.chartRequestsSummary', { requests: 1, days: 1 }), 'Chart of requests per day: 1 request over 1 day. The numbers are in the “Per day” table.');
  t.is(message('en', 'usage.chartTokensSummary', { tokens: 12_345, days: 30 }), 'Chart of tokens per day: 12,345 tokens over 30 days. The numbers are in the “Per day” table.');
  t.is(message('en', 'keys.count', { active: 5, max: 5 }), '5 of 5 active keys');
  t.is(message('vi', 'playground.found', { count: 1 }), '1 giọng phù hợp');
  t.is(message('vi', 'usage.chartTokensSummary', { tokens: 12_345, days: 30 }), 'Biểu đồ token mỗi ngày: 12.345 token trong 30 ngày. Các con số có trong bảng “Theo ngày”.');
});

test('placeholders: numbers in the language\'s style, text as it is, unknown names left alone', (t) => {
  t.is(fill('en', '{n|# item|# items}, {s}, {missing}', { n: 1234, s: '1,5' }), '1,234 items, 1,5, {missing}');
  t.is(fill('en', '{n|# item|# items}', { n: '1' }), '1 items', 'a string is text: only a number chooses a form');
  t.is(fill('en', '{n|# item|# items}', { n: 1.2 }), '1 item', 'shown whole, chosen whole');
});

test('a lockout of 15 minutes reads 15, though Retry-After is rounded up to 900 or 901 s', (t) => {
  t.is(lockMinutes(901), 15);
  t.is(lockMinutes(900), 15);
  t.is(lockMinutes(899), 15);
  t.is(lockMinutes(841), 14);
  t.is(lockMinutes(61), 1);
  t.is(lockMinutes(62), 2);
  t.is(lockMinutes(1), 1);
  t.is(lockMinutes(null), 1);
});
