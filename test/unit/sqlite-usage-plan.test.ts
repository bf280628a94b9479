import test from 'ava';
import { planWindow } from '../../core/adapters/analytics/sqlite-usage-sql.ts';

const at = (iso: string) => Date.parse(iso);
const day = (iso: string) => Math.floor(at(iso) / 86_400_000);
const later = at('2027-01-01T00:00:00Z');

test('the embedded /usage plan: whole days from the cells, the first partial day from raw rows', (t) => {
  const plan = planWindow(at('2026-02-28T17:00:00Z'), at('2026-03-03T00:00:00Z'), true, later);
  t.like(plan, { headFrom: at('2026-02-28T17:00:00Z'), headTo: at('2026-03-01T00:00:00Z'), firstDay: day('2026-03-01T00:00:00Z'), endDay: day('2026-03-03T00:00:00Z'), tailDay: -1, subtract: 0 });
});

test('a window ending now reads its last day from the cells less the rows after it, as the ClickHouse plan does (a busy account read its whole day so far)', (t) => {
  const to = at('2026-03-02T01:00:00Z');
  t.like(planWindow(at('2026-03-01T00:00:00Z'), to, true, to + 2_000), { tailDay: day('2026-03-02T00:00:00Z'), tailTo: to, tailDayEnd: at('2026-03-03T00:00:00Z'), subtract: 1 });
  // Midnight in UTC+7: 17 hours inside the last UTC day against 7 after it.
  t.like(planWindow(at('2026-02-28T17:00:00Z'), at('2026-03-02T17:00:00Z'), true, later), { tailDay: day('2026-03-02T00:00:00Z'), subtract: 1 });
  // More of that day after the window than inside it, all of it past: its raw rows inside the window instead.
  t.like(planWindow(at('2026-03-01T00:00:00Z'), to, true, later), { tailDay: day('2026-03-02T00:00:00Z'), tailFrom: at('2026-03-02T00:00:00Z'), tailTo: to, subtract: 0 });
  t.like(planWindow(at('2026-03-01T00:00:00Z'), to, false, to), { headFrom: at('2026-03-01T00:00:00Z'), headTo: to, tailDay: -1, subtract: 0 }, 'cells off: raw rows only');
});
