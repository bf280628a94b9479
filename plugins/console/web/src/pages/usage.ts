import { ApiFailure, apiJson } from '../api.ts';
import { dayChart, daysBetween } from '../charts.ts';
import { download, toCsv } from '../csv.ts';
import { field, h, notice, replace } from '../dom.ts';
import { fmtDateTime, fmtDay, fmtNumber, fmtSeconds, t, type MessageKey } from '../i18n.ts';
import { navigate, type Route } from '../router.ts';
import type { Cleanup } from '../page.ts';

/**
 * `GET /usage` for the whole account (scope=account): requests and tokens
 * per day, generation time, by route, by voice, errors by code, with a
 * range of UTC days (as the API counts them) and CSV export of each table.
 * Every number shown is the API's.
 */

interface Usage {
  from: string;
  to: string;
  totals: Record<'requests' | 'ok' | 'queued' | 'cacheHit' | 'denied' | 'error' | 'tokenCost' | 'characters' | 'audioSeconds', number> & { avgGenMs: number | null; p95GenMs: number | null };
  byDay: Array<{ day: string; requests: number; ok: number; denied: number; error: number; tokenCost: number; characters: number; audioSeconds: number; avgGenMs: number | null }>;
  byRoute: Array<{ route: string; requests: number; ok: number; denied: number; error: number; tokenCost: number; avgGenMs: number | null }>;
  byVoice: Array<{ voice: string; voiceName: string | null; engine: string; requests: number; tokenCost: number; audioSeconds: number; avgGenMs: number | null; errors: number }>;
  byErrorCode: Array<{ errorCode: string; statusCode: number; count: number; lastAt: string }>;
}

const MAX_DAYS = 92;
const DAY_MS = 86_400_000;
const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
/** A real calendar day: Date.parse takes 2026-02-30 as 2 March, the API refuses it. */
const validDay = (v: string | null): v is string => !!v && /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(`${v}T00:00:00Z`)) && utcDay(Date.parse(`${v}T00:00:00Z`)) === v;

/** What is wrong with a range of days, in the console's words (the form's and a link's alike); null when nothing is. */
function rangeProblem(from: string | null, to: string | null): string | null {
  if (!validDay(from) || !validDay(to) || from > to) return t('usage.badRange');
  if ((Date.parse(to) - Date.parse(from)) / DAY_MS + 1 > MAX_DAYS) return t('usage.tooLong', { days: MAX_DAYS });
  return null;
}

interface Column<R> {
  key: keyof R & string;
  label: MessageKey;
  format?: (row: R) => string;
  numeric?: boolean;
  /** draw each row's share of the largest as a bar beside the number */
  bar?: boolean;
}

/** A bar of `value / max` (its width set through the CSSOM, which the page's CSP allows). */
function bar(value: number, max: number): HTMLElement {
  const el = h('span', { class: 'bar', 'aria-hidden': 'true' });
  el.style.width = `${max > 0 ? Math.max(2, Math.round((value / max) * 100)) : 0}%`;
  return h('span', { class: 'bar-track', 'aria-hidden': 'true' }, el);
}

function table<R extends object>(id: string, title: MessageKey, rows: R[], columns: Array<Column<R>>, csvName: string): HTMLElement {
  const csv = h('button', { type: 'button', class: 'secondary small', 'aria-label': t('usage.csvLabel', { table: t(title) }) }, t('common.csv'));
  csv.addEventListener('click', () => download(csvName, toCsv(columns.map((c) => c.key), rows as Array<Record<string, unknown>>)));
  return h('section', { class: 'usage-table', 'aria-labelledby': id, id: `${id}-section` },
    h('div', { class: 'section-head' }, h('h2', { id }, t(title)), rows.length ? csv : null),
    rows.length === 0 ? h('p', { class: 'muted' }, t('usage.none')) : h('div', { class: 'table-wrap' }, h('table', {},
      h('thead', {}, h('tr', {}, columns.map((c) => h('th', { scope: 'col', class: c.numeric ? 'num' : null }, t(c.label))))),
      h('tbody', {}, rows.map((row) => h('tr', {}, columns.map((c, i) => {
        const value = c.format ? c.format(row) : c.numeric ? fmtNumber(row[c.key] as number) : String(row[c.key] ?? '—');
        if (i === 0) return h('th', { scope: 'row' }, value);
        const max = c.bar ? Math.max(...rows.map((r) => Number(r[c.key]) || 0)) : 0;
        return h('td', { class: c.numeric ? 'num' : null, 'data-field': c.key }, c.bar ? [bar(Number(row[c.key]) || 0, max), ' '] : null, value);
      })))))));
}

const num = <R>(key: keyof R & string, label: MessageKey, digits = 0, withBar = false): Column<R> => ({ key, label, numeric: true, bar: withBar, format: (r) => fmtNumber(r[key] as number | null, digits) });

export async function render(root: HTMLElement, route: Route): Promise<Cleanup> {
  const today = utcDay(Date.now());
  const to = validDay(route.query.get('to')) ? route.query.get('to')! : today;
  const from = validDay(route.query.get('from')) ? route.query.get('from')! : utcDay(Date.parse(`${to}T00:00:00Z`) - 29 * DAY_MS);
  const charts: Array<{ destroy(): void }> = [];

  const fromInput = h('input', { type: 'date', value: from, max: today, required: true });
  const toInput = h('input', { type: 'date', value: to, max: today, required: true });
  const formMessage = h('div', {});
  const show = (f: string, l: string) => navigate(`usage?from=${f}&to=${l}`);
  const preset = (days: number) => {
    const b = h('button', { type: 'button', class: 'secondary small' }, t('usage.lastDays', { days }));
    b.addEventListener('click', () => show(utcDay(Date.now() - (days - 1) * DAY_MS), today));
    return b;
  };
  const form = h('form', { class: 'card range', 'aria-label': t('usage.range') },
    h('div', { class: 'row' }, field(t('usage.from'), fromInput), field(t('usage.to'), toInput), h('div', { class: 'field end' }, h('button', { type: 'submit' }, t('usage.show')))),
    h('div', { class: 'presets' }, preset(7), preset(30), preset(90)),
    h('p', { class: 'hint' }, t('usage.utcNote')),
    formMessage);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const problem = rangeProblem(fromInput.value, toInput.value);
    if (problem) return replace(formMessage, notice('error', problem));
    show(fromInput.value, toInput.value);
  });

  const results = h('div', { 'aria-live': 'polite', 'aria-busy': 'true' }, h('p', { class: 'loading' }, t('common.loading')));
  root.append(h('h1', { tabindex: -1 }, t('usage.title')), h('p', { class: 'lead' }, t('usage.intro')), form, results);

  // A link (or a hand-edited address) can ask for a range the form would refuse: it gets the form's sentence, not the API's.
  const asked = (name: 'from' | 'to', shown: string) => (route.query.has(name) ? route.query.get(name) : shown);
  const problem = rangeProblem(asked('from', from), asked('to', to));
  const query = new URLSearchParams({ scope: 'account', from: `${from}T00:00:00.000Z`, to: new Date(Date.parse(`${to}T00:00:00Z`) + DAY_MS).toISOString() });
  const fail = (text: string): Cleanup => {
    replace(results, notice('error', text));
    results.setAttribute('aria-busy', 'false');
    return () => undefined;
  };
  if (problem) return fail(problem);
  let usage: Usage;
  try {
    usage = await apiJson<Usage>(`/usage?${query}`);
  } catch (err) {
    return fail(err instanceof ApiFailure ? t('common.error', { message: err.message }) : String(err));
  }

  const totals = usage.totals;
  const tile = (label: MessageKey, value: string, key: string) => h('div', { class: 'tile', 'data-total': key }, h('div', { class: 'tile-label' }, t(label)), h('div', { class: 'tile-value' }, value));
  const days = daysBetween(from, to);
  const byDay = new Map(usage.byDay.map((d) => [d.day, d]));
  const perDay = (f: (d: Usage['byDay'][number]) => number | null) => days.map((d) => (byDay.has(d) ? f(byDay.get(d)!) : 0));
  const latency = days.map((d) => byDay.get(d)?.avgGenMs ?? null);
  const requestsChart = dayChart(t('usage.chartRequests'), t('usage.chartRequestsSummary', { requests: totals.requests, days: days.length }), days, [
    { label: t('usage.ok'), values: perDay((d) => d.ok), color: '#1f7a4d' },
    { label: t('usage.denied'), values: perDay((d) => d.denied), color: '#b26a00' },
    { label: t('usage.errors'), values: perDay((d) => d.error), color: '#b3261e' },
  ]);
  const tokensChart = dayChart(t('usage.chartTokens'), t('usage.chartTokensSummary', { tokens: totals.tokenCost, days: days.length }), days, [
    { label: t('usage.tokens'), values: perDay((d) => d.tokenCost), color: '#2457a6', bars: true },
  ]);
  const latencyChart = dayChart(t('usage.chartLatency'), t('usage.chartLatencySummary', { p95: fmtNumber(totals.p95GenMs) }), days, [
    { label: t('usage.avgGen'), values: latency, color: '#6b3fa0' },
  ]);
  charts.push(requestsChart, tokensChart, latencyChart);

  replace(results,
    h('section', { class: 'tiles', 'aria-label': t('usage.totals') },
      tile('usage.requests', fmtNumber(totals.requests), 'requests'), tile('usage.ok', fmtNumber(totals.ok), 'ok'),
      tile('usage.denied', fmtNumber(totals.denied), 'denied'), tile('usage.errors', fmtNumber(totals.error), 'error'),
      tile('usage.tokens', fmtNumber(totals.tokenCost), 'tokenCost'), tile('usage.characters', fmtNumber(totals.characters), 'characters'),
      tile('usage.audio', fmtSeconds(totals.audioSeconds), 'audioSeconds'), tile('usage.p95Gen', totals.p95GenMs === null ? '—' : `${fmtNumber(totals.p95GenMs)} ms`, 'p95GenMs')),
    totals.requests === 0 ? notice('info', t('usage.empty')) : null,
    h('div', { class: 'charts' }, requestsChart.figure, tokensChart.figure, latencyChart.figure),
    table('by-day', 'usage.perDay', usage.byDay, [
      { key: 'day', label: 'usage.colDay', format: (r) => fmtDay(r.day) }, num('requests', 'usage.requests'), num('ok', 'usage.ok'), num('denied', 'usage.denied'),
      num('error', 'usage.errors'), num('tokenCost', 'usage.tokens'), num('characters', 'usage.characters'), num('audioSeconds', 'usage.audioSeconds', 1), num('avgGenMs', 'usage.avgGen'),
    ], `usage-by-day-${from}-${to}.csv`),
    table('by-route', 'usage.byRoute', usage.byRoute, [
      { key: 'route', label: 'usage.colRoute' }, num('requests', 'usage.requests', 0, true), num('ok', 'usage.ok'), num('denied', 'usage.denied'),
      num('error', 'usage.errors'), num('tokenCost', 'usage.tokens'), num('avgGenMs', 'usage.avgGen'),
    ], `usage-by-route-${from}-${to}.csv`),
    table('by-voice', 'usage.byVoice', usage.byVoice, [
      { key: 'voice', label: 'usage.colVoice', format: (r) => (r.voiceName ? `${r.voiceName} (${r.voice})` : r.voice) }, { key: 'engine', label: 'usage.colEngine' },
      num('requests', 'usage.requests', 0, true), num('tokenCost', 'usage.tokens'), num('audioSeconds', 'usage.audioSeconds', 1), num('avgGenMs', 'usage.avgGen'), num('errors', 'usage.errors'),
    ], `usage-by-voice-${from}-${to}.csv`),
    table('by-error', 'usage.byError', usage.byErrorCode, [
      { key: 'errorCode', label: 'usage.colCode' }, num('statusCode', 'usage.colStatus'), num('count', 'usage.colCount', 0, true),
      { key: 'lastAt', label: 'usage.colLast', format: (r) => fmtDateTime(r.lastAt) },
    ], `usage-errors-${from}-${to}.csv`),
  );
  results.setAttribute('aria-busy', 'false');
  return () => charts.forEach((c) => c.destroy());
}
