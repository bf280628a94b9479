import test from 'ava';
import path from 'node:path';
import { parse } from 'yaml';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { readText, requireTools, run } from './tools.ts';

/**
 * The alert rules and the Grafana dashboard of helm/vieneu-tts: the rules
 * pass `promtool check rules` and their own `promtool test rules` cases, and
 * every metric a rule or a panel reads is one the platform really exposes
 * (scraped from a running platform with every module loaded), so a renamed
 * metric breaks this test instead of a dashboard in production.
 */
const CHART = path.resolve('helm/vieneu-tts');
const RULES = path.join(CHART, 'alerts/vieneu-tts.rules.yaml');
const RULE_TESTS = path.join(CHART, 'alerts/vieneu-tts.rules.test.yaml');
const DASHBOARD = path.join(CHART, 'dashboards/vieneu-tts.json');

const FUNCTIONS = new Set([
  'sum', 'max', 'min', 'avg', 'count', 'rate', 'irate', 'increase', 'deriv', 'histogram_quantile', 'absent', 'time', 'by', 'without',
  'and', 'or', 'unless', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'offset', 'topk', 'bottomk', 'clamp_min', 'clamp_max',
]);

/** Metric names a PromQL expression reads: identifiers outside label matchers, ranges and strings that are not functions or keywords. */
function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$__\w+/g, ' ');
  const names = stripped.match(/[a-zA-Z_:][a-zA-Z0-9_:]*/g) ?? [];
  return [...new Set(names.filter((n) => !FUNCTIONS.has(n) && !/^(e|inf|nan)$/i.test(n)))];
}

function ruleExpressions(): Array<{ alert: string; expr: string }> {
  const groups = parse(readText(RULES)).groups as Array<{ rules: Array<{ alert: string; expr: string }> }>;
  return groups.flatMap((g) => g.rules);
}

function dashboardExpressions(): Array<{ panel: string; expr: string }> {
  const dashboard = JSON.parse(readText(DASHBOARD)) as { panels: Array<{ title: string; type: string; targets?: Array<{ expr: string }> }> };
  return dashboard.panels.flatMap((p) => (p.targets ?? []).map((target) => ({ panel: p.title, expr: target.expr })));
}

let p: TestPlatform;
let exposed: Set<string>;
test.before(async () => {
  p = await startTestPlatform({
    MODULES: 'inference,pipelines/ledger-writer,pipelines/usage-aggregator,pipelines/webhook-dispatcher,pipelines/reconciler',
    RECONCILER_INITIAL_DELAY_SECONDS: '0',
    RECONCILER_SETTLE_SECONDS: '0',
  });
  // One request and one run of the reconciler, so every series has a sample.
  const { apiKey } = await p.bootstrap();
  await p.api('/balance', { key: apiKey });
  const deadline = Date.now() + 15_000;
  let text = '';
  do {
    text = await (await fetch(`${p.opsUrl}/metrics`)).text();
    if (/^ledger_reconciliation_last_success_timestamp_seconds [1-9]/m.test(text)) break;
    await new Promise((r) => setTimeout(r, 100));
  } while (Date.now() < deadline);
  exposed = new Set<string>();
  for (const line of text.split('\n')) {
    const match = /^# TYPE (\S+) (\w+)/.exec(line);
    if (!match) continue;
    const [, name, type] = match;
    exposed.add(name!);
    if (type === 'histogram') for (const suffix of ['_bucket', '_count', '_sum']) exposed.add(name + suffix);
    if (type === 'summary') for (const suffix of ['_count', '_sum']) exposed.add(name + suffix);
  }
});
test.after.always(async () => {
  await p?.stop();
});

test('the metric-name reader finds metrics and leaves functions, labels and ranges out', (t) => {
  t.deepEqual(metricNames('sum by (route, le) (rate(http_request_duration_seconds_bucket{status=~"5..", route="a b"}[5m])) / max(x_total) > 0.05'), ['http_request_duration_seconds_bucket', 'x_total']);
  t.deepEqual(metricNames('time() - max(ledger_reconciliation_last_success_timestamp_seconds) > 3 * 3600 or absent(up)'), ['ledger_reconciliation_last_success_timestamp_seconds', 'up']);
});

test('every metric an alert rule reads is exposed by the platform', (t) => {
  const unknown = ruleExpressions().flatMap(({ alert, expr }) => metricNames(expr).filter((n) => !exposed.has(n)).map((n) => `${alert}: ${n}`));
  t.deepEqual(unknown, []);
  t.true(ruleExpressions().length >= 8);
});

test('every metric a dashboard panel reads is exposed by the platform', (t) => {
  const expressions = dashboardExpressions();
  const unknown = expressions.flatMap(({ panel, expr }) => metricNames(expr).filter((n) => !exposed.has(n)).map((n) => `${panel}: ${n}`));
  t.deepEqual(unknown, []);
  // The panels issue 15 asks for, by the metric each reads.
  const read = new Set(expressions.flatMap(({ expr }) => metricNames(expr)));
  for (const metric of [
    'http_request_duration_seconds_count', 'http_request_duration_seconds_bucket', 'tokens_charged_total', 'stream_slots_in_use', 'tts_queue_depth',
    'bus_consumer_lag', 'tts_jobs_finished_total', 'webhook_delivery_attempts_total', 'webhook_deliveries_dead_total', 'usage_events_written_total',
    'ledger_reconciliation_drift_tokens',
  ]) t.true(read.has(metric), `a panel shows ${metric}`);
});

test('the dashboard is Grafana JSON with unique panel ids, a Prometheus datasource variable and no overlapping panels', (t) => {
  const dashboard = JSON.parse(readText(DASHBOARD));
  t.is(dashboard.uid, 'vieneu-tts');
  t.true(dashboard.schemaVersion >= 36);
  t.like(dashboard.templating.list[0], { name: 'datasource', type: 'datasource', query: 'prometheus' });
  const ids = dashboard.panels.map((panel: { id: number }) => panel.id);
  t.is(new Set(ids).size, ids.length);
  const cells = new Set<string>();
  for (const panel of dashboard.panels as Array<{ title: string; gridPos: { x: number; y: number; w: number; h: number }; type: string; datasource?: { uid: string } }>) {
    t.true(panel.gridPos.x + panel.gridPos.w <= 24, `${panel.title} fits the 24-column grid`);
    if (panel.type !== 'row') t.is(panel.datasource?.uid, '${datasource}');
    for (let x = panel.gridPos.x; x < panel.gridPos.x + panel.gridPos.w; x++) {
      for (let y = panel.gridPos.y; y < panel.gridPos.y + panel.gridPos.h; y++) {
        t.false(cells.has(`${x},${y}`), `${panel.title} overlaps another panel at ${x},${y}`);
        cells.add(`${x},${y}`);
      }
    }
  }
});

test('promtool check rules accepts the alert rules, and promtool test rules passes their cases', async (t) => {
  const tools = await requireTools(t);
  if (!tools) return;
  const check = run(tools.promtool, ['check', 'rules', RULES]);
  t.is(check.status, 0, check.stdout + check.stderr);
  t.regex(check.stdout, new RegExp(`SUCCESS: ${ruleExpressions().length} rules found`));
  const cases = run(tools.promtool, ['test', 'rules', RULE_TESTS]);
  t.is(cases.status, 0, cases.stdout + cases.stderr);
  t.regex(cases.stdout, /SUCCESS/);
});

test('promtool refuses a broken rule (the check can fail)', async (t) => {
  const tools = await requireTools(t);
  if (!tools) return;
  const broken = readText(RULES).replace('expr: max(tts_queue_depth) > 8000', 'expr: max(tts_queue_depth > 8000');
  const result = run(tools.promtool, ['check', 'rules'], { input: broken });
  t.not(result.status, 0);
});
