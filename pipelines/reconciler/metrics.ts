import client from 'prom-client';
import type { ReconciliationReport } from '../../core/billing/reconciliation.ts';

/**
 * The reconciler's own metrics, registered on the process registry only
 * where the module is loaded, so no other process reports a drift of 0 it
 * never measured. Gauges hold the last run's findings.
 */
export interface ReconcilerMetrics {
  record(report: ReconciliationReport): void;
  failed(): void;
}

export function createReconcilerMetrics(registry: client.Registry): ReconcilerMetrics {
  const registers = [registry];
  const driftTokens = new client.Gauge({ name: 'ledger_reconciliation_drift_tokens', help: 'Sum of |grant usedTokens - ledger net| over grants that drifted (last run)', registers });
  const driftedGrants = new client.Gauge({ name: 'ledger_reconciliation_drifted_grants', help: 'Grants whose usage differs from their ledger after the settle time (last run)', registers });
  const unsettledGrants = new client.Gauge({ name: 'ledger_reconciliation_unsettled_grants', help: 'Grants that differed but moved during the settle time (last run)', registers });
  const grantsChecked = new client.Gauge({ name: 'ledger_reconciliation_grants_checked', help: 'Grants compared with the ledger (last run)', registers });
  const usageDriftTokens = new client.Gauge({ name: 'ledger_reconciliation_usage_drift_tokens', help: 'Sum of |ledger charges - usage tokenCost| over accounts that differ in the usage window (last run)', registers });
  const usageDriftedAccounts = new client.Gauge({ name: 'ledger_reconciliation_usage_drifted_accounts', help: 'Accounts whose ledger charges differ from usage analytics in the window (last run)', registers });
  const runs = new client.Counter({ name: 'ledger_reconciliation_runs_total', help: 'Reconciliation runs by result', labelNames: ['result'], registers });
  const lastSuccess = new client.Gauge({ name: 'ledger_reconciliation_last_success_timestamp_seconds', help: 'Unix time the last successful run finished', registers });
  const duration = new client.Gauge({ name: 'ledger_reconciliation_duration_seconds', help: 'How long the last successful run took', registers });
  for (const result of ['ok', 'drift', 'failed']) runs.inc({ result }, 0);

  return {
    record(report) {
      driftTokens.set(report.driftTokens);
      driftedGrants.set(report.grantsDrifted);
      unsettledGrants.set(report.grantsUnsettled);
      grantsChecked.set(report.grantsChecked);
      usageDriftTokens.set(report.usage?.driftTokens ?? 0);
      usageDriftedAccounts.set(report.usage?.accountsDrifted ?? 0);
      const drifted = report.grantsDrifted > 0 || (report.usage?.accountsDrifted ?? 0) > 0;
      runs.inc({ result: drifted ? 'drift' : 'ok' });
      const finished = Date.parse(report.finishedAt);
      lastSuccess.set(finished / 1000);
      duration.set((finished - Date.parse(report.startedAt)) / 1000);
    },
    failed() {
      runs.inc({ result: 'failed' });
    },
  };
}
