import { definePlugin } from '../../core/plugin.ts';
import { coreServices } from '../../core/services.ts';
import { startLedgerWriter } from './writer.ts';

/** Appends every charge and refund from `ledger.entries` to the billing ledger (pipelines role). */
export default definePlugin({
  id: 'ledger-writer',
  version: '2.0.0',
  coreApi: 2,
  description: 'Billing ledger writer, idempotent on the entry id',
  deps: { bus: coreServices.bus, documents: coreServices.documents },
  register({ deps, worker }) {
    worker({
      name: 'writer',
      role: 'pipelines',
      start: async () => {
        const subscription = await startLedgerWriter(deps);
        return () => subscription.stop();
      },
    });
  },
});
