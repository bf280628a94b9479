import type { Documents } from '../../core/ports/documents.ts';
import type { Analytics } from '../../core/ports/analytics.ts';
import type { Logger } from '../../core/logger.ts';
import { reconcileAll, type ReconcileOptions, type ReconciliationReport } from '../../core/billing/reconciliation.ts';
import type { ReconcilerMetrics } from './metrics.ts';

export interface ReconcilerSchedule {
  /** between the end of one run and the start of the next */
  intervalMs: number;
  /** before the first run, so a rolling restart does not start with a full walk */
  initialDelayMs: number;
  options: ReconcileOptions;
}

export interface ReconcilerDeps {
  documents: Documents;
  analytics: Analytics | null;
  logger: Logger;
  metrics: ReconcilerMetrics;
}

/** One log line per run; drifted grants and accounts are named (the largest first). */
export function logReport(logger: Logger, report: ReconciliationReport): void {
  const summary = {
    grantsChecked: report.grantsChecked, grantsDrifted: report.grantsDrifted, driftTokens: report.driftTokens,
    grantsUnsettled: report.grantsUnsettled,
    usageAccountsChecked: report.usage?.accountsChecked ?? null, usageAccountsDrifted: report.usage?.accountsDrifted ?? null,
    usageDriftTokens: report.usage?.driftTokens ?? null,
    ms: Date.parse(report.finishedAt) - Date.parse(report.startedAt),
  };
  if (report.grantsDrifted > 0 || (report.usage?.accountsDrifted ?? 0) > 0) {
    logger.warn('ledger reconciliation: drift found', { ...summary, drifts: report.drifts.slice(0, 20), usageDrifts: report.usage?.drifts.slice(0, 20) ?? [] });
  } else {
    logger.info('ledger reconciliation: ledger and grants agree', summary);
  }
}

/**
 * Runs the reconciliation every `intervalMs` until stopped. Stopping aborts a
 * run in progress (it only reads, so nothing is left half done) and resolves
 * once it has let go.
 */
export function startReconciler(deps: ReconcilerDeps, schedule: ReconcilerSchedule): { stop(): Promise<void>; runNow(): Promise<ReconciliationReport | null> } {
  const controller = new AbortController();
  let current: Promise<ReconciliationReport | null> | null = null;
  let timer: NodeJS.Timeout | null = null;

  const run = (): Promise<ReconciliationReport | null> => {
    current ??= (async () => {
      try {
        const report = await reconcileAll({ documents: deps.documents, analytics: deps.analytics }, { ...schedule.options, signal: controller.signal });
        deps.metrics.record(report);
        logReport(deps.logger, report);
        return report;
      } catch (err) {
        if (controller.signal.aborted) return null;
        deps.metrics.failed();
        deps.logger.error('ledger reconciliation failed; the next run tries again', { err: err as Error });
        return null;
      } finally {
        current = null;
      }
    })();
    return current;
  };

  const next = (delayMs: number) => {
    if (controller.signal.aborted) return;
    timer = setTimeout(async () => {
      await run();
      next(schedule.intervalMs);
    }, delayMs);
    timer.unref();
  };
  next(schedule.initialDelayMs);

  return {
    async stop() {
      controller.abort(new Error('reconciler stopping'));
      if (timer) clearTimeout(timer);
      await current;
    },
    runNow: run,
  };
}
