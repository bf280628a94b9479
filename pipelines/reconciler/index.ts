import Joi from 'joi';
import { definePlugin } from '../../core/plugin.ts';
import { coreServices } from '../../core/services.ts';
import { createReconcilerMetrics } from './metrics.ts';
import { startReconciler } from './scheduler.ts';

interface ReconcilerConfig {
  RECONCILER_INTERVAL_SECONDS: number;
  RECONCILER_INITIAL_DELAY_SECONDS: number;
  RECONCILER_SETTLE_SECONDS: number;
  RECONCILER_USAGE_CHECK: boolean;
  RECONCILER_USAGE_WINDOW_HOURS: number;
  RECONCILER_USAGE_DELAY_MINUTES: number;
}

/**
 * Scheduled ledger reconciliation (pipelines role): every grant's usage
 * against its ledger entries, and each account's ledger charges against the
 * usage analytics of a recent window. Findings go to metrics
 * (`ledger_reconciliation_*`) and one log line per run; it never corrects
 * anything by itself. The same check runs once from the admin CLI:
 * `npm run admin -- reconcile-all`.
 */
export default definePlugin({
  id: 'reconciler',
  version: '1.0.0',
  coreApi: 2,
  description: 'Scheduled ledger reconciliation: grants vs ledger vs usage analytics',
  config: Joi.object<ReconcilerConfig>({
    RECONCILER_INTERVAL_SECONDS: Joi.number().integer().min(1).max(86_400).default(900),
    RECONCILER_INITIAL_DELAY_SECONDS: Joi.number().integer().min(0).max(86_400).default(60),
    RECONCILER_SETTLE_SECONDS: Joi.number().integer().min(0).max(3600).default(30),
    RECONCILER_USAGE_CHECK: Joi.boolean().truthy('1').falsy('0').default(true),
    RECONCILER_USAGE_WINDOW_HOURS: Joi.number().min(1).max(24 * 31).default(24),
    RECONCILER_USAGE_DELAY_MINUTES: Joi.number().min(0).max(24 * 60).default(15),
  }),
  deps: {
    documents: coreServices.documents,
    analytics: coreServices.analytics,
    logger: coreServices.logger,
    metrics: coreServices.metrics,
  },
  register({ deps, config, worker }) {
    const metrics = createReconcilerMetrics(deps.metrics.registry);
    worker({
      name: 'scheduler',
      role: 'pipelines',
      start: async () => {
        const reconciler = startReconciler({
          documents: deps.documents,
          analytics: config.RECONCILER_USAGE_CHECK ? deps.analytics : null,
          logger: deps.logger,
          metrics,
        }, {
          intervalMs: config.RECONCILER_INTERVAL_SECONDS * 1000,
          initialDelayMs: config.RECONCILER_INITIAL_DELAY_SECONDS * 1000,
          options: {
            settleMs: config.RECONCILER_SETTLE_SECONDS * 1000,
            usageWindow: config.RECONCILER_USAGE_CHECK
              ? { windowMs: config.RECONCILER_USAGE_WINDOW_HOURS * 3_600_000, delayMs: config.RECONCILER_USAGE_DELAY_MINUTES * 60_000 }
              : null,
          },
        });
        return () => reconciler.stop();
      },
    });
  },
});
