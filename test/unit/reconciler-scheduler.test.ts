import test from 'ava';
import client from 'prom-client';
import { openMemoryDb } from '../../core/adapters/embedded-db.ts';
import { createSqliteDocuments } from '../../core/adapters/documents/sqlite.ts';
import type { Logger } from '../../core/logger.ts';
import type { Documents } from '../../core/ports/documents.ts';
import { createReconcilerMetrics } from '../../pipelines/reconciler/metrics.ts';
import { startReconciler } from '../../pipelines/reconciler/scheduler.ts';

/** The scheduled reconciler (pipelines/reconciler): one log line and the ledger_reconciliation_* gauges per run. */
function recordingLogger() {
  const lines: Array<{ level: string; msg: string; fields: Record<string, unknown> }> = [];
  const log = (level: string) => (msg: string, fields: Record<string, unknown> = {}) => void lines.push({ level, msg, fields });
  const logger: Logger = { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error'), child: () => logger };
  return { logger, lines };
}

async function driftingGrant(documents: Documents): Promise<string> {
  const grant = await documents.grants.create({
    id: 'grt_drift', accountId: 'acc_1', plan: 'pro', totalTokens: 1000, usedTokens: 0, dailyCap: null, weeklyCap: null, dayKey: null,
    dayUsed: 0, weekKey: null, weekUsed: 0, expiresAt: null, isGift: false, engines: ['v4'], status: 'active', createdAt: '2026-11-01T00:00:00.000Z',
  });
  const entry = {
    id: 'chg_1', kind: 'charge' as const, grantId: grant.id, accountId: grant.accountId, keyId: null, chargeId: 'chg_1', requestId: null,
    route: 'tts', tokens: 195, dayKey: '2026-11-21', weekKey: 'w', at: '2026-11-21T00:00:00.000Z',
  };
  await documents.grants.charge({ grantId: grant.id, tokens: 195, dayKey: '2026-11-21', weekKey: 'w', now: entry.at, entry });
  return grant.id;
}

function gauge(text: string, name: string): number | null {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : null;
}

test('a run with drift logs one warning naming the grant and sets the gauges; a clean run logs at info', async (t) => {
  const db = openMemoryDb();
  t.teardown(() => db.close());
  const documents = createSqliteDocuments(db);
  const grantId = await driftingGrant(documents);
  const registry = new client.Registry();
  const { logger, lines } = recordingLogger();
  const reconciler = startReconciler(
    { documents, analytics: null, logger, metrics: createReconcilerMetrics(registry) },
    { intervalMs: 3_600_000, initialDelayMs: 3_600_000, options: { settleMs: 0 } },
  );
  t.teardown(() => reconciler.stop());

  const report = await reconciler.runNow();
  t.like(report, { grantsDrifted: 1, driftTokens: 195 });
  t.is(lines.length, 1);
  t.like(lines[0], { level: 'warn', msg: 'ledger reconciliation: drift found', fields: { grantsChecked: 1, grantsDrifted: 1, driftTokens: 195 } });
  t.is((lines[0]!.fields.drifts as Array<{ grantId: string }>)[0]!.grantId, grantId);
  let text = await registry.metrics();
  t.is(gauge(text, 'ledger_reconciliation_drift_tokens'), 195);
  t.is(gauge(text, 'ledger_reconciliation_drifted_grants'), 1);
  t.is(gauge(text, 'ledger_reconciliation_runs_total{result="drift"}'), 1);

  await documents.ledger.append((await documents.outbox.pending(10))[0]!); // the ledger writer catches up
  await reconciler.runNow();
  t.like(lines[1], { level: 'info', msg: 'ledger reconciliation: ledger and grants agree', fields: { grantsDrifted: 0 } });
  text = await registry.metrics();
  t.is(gauge(text, 'ledger_reconciliation_drift_tokens'), 0);
  t.is(gauge(text, 'ledger_reconciliation_runs_total{result="ok"}'), 1);
  t.true((gauge(text, 'ledger_reconciliation_last_success_timestamp_seconds') ?? 0) > 0);
});

test('a failed run is counted and logged as an error, and the schedule goes on', async (t) => {
  const db = openMemoryDb();
  const documents = createSqliteDocuments(db);
  db.close(); // every read fails
  const registry = new client.Registry();
  const { logger, lines } = recordingLogger();
  const reconciler = startReconciler(
    { documents, analytics: null, logger, metrics: createReconcilerMetrics(registry) },
    { intervalMs: 20, initialDelayMs: 0, options: { settleMs: 0 } },
  );
  t.teardown(() => reconciler.stop());
  await new Promise((r) => setTimeout(r, 200));
  const failures = lines.filter((l) => l.level === 'error' && l.msg.startsWith('ledger reconciliation failed'));
  t.true(failures.length >= 2, `runs keep coming after a failure (${failures.length})`);
  t.true((gauge(await registry.metrics(), 'ledger_reconciliation_runs_total{result="failed"}') ?? 0) >= 2);
});

test('stop() aborts a run waiting out its settle time and resolves promptly', async (t) => {
  const db = openMemoryDb();
  t.teardown(() => db.close());
  const documents = createSqliteDocuments(db);
  await driftingGrant(documents);
  const { logger, lines } = recordingLogger();
  const reconciler = startReconciler(
    { documents, analytics: null, logger, metrics: createReconcilerMetrics(new client.Registry()) },
    { intervalMs: 3_600_000, initialDelayMs: 0, options: { settleMs: 60_000 } },
  );
  await new Promise((r) => setTimeout(r, 100));
  const started = Date.now();
  await reconciler.stop();
  t.true(Date.now() - started < 1000);
  t.deepEqual(lines, [], 'an aborted run is neither logged nor counted as a failure');
});
