import test from 'ava';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openEmbeddedDb } from '../../core/adapters/embedded-db.ts';
import { createSqliteDocuments } from '../../core/adapters/documents/sqlite.ts';
import { createBillingService } from '../../core/billing/service.ts';
import { createAdminService } from '../../plugins/admin/service.ts';
import { defaultEngines } from '../../config/engines.ts';
import { TOPICS } from '../../core/ports/bus.ts';
import { startTestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait.ts';
import { coreServices } from '../../core/services.ts';

test('the process dies between charges and their publish: on restart the ledger gets every entry exactly once and reconciles', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vieneu-outbox-'));
  // Charge with no relay running, then drop everything: the state a crash leaves.
  const db = openEmbeddedDb(dataDir);
  const documents = createSqliteDocuments(db);
  const billing = createBillingService({ documents, engines: defaultEngines(3), globalMultiplier: 1.3, aiRefineSurchargePerChar: 0.5, timezoneOffsetMinutes: 420 });
  const admin = createAdminService({ documents, billing });
  const acct = await admin.bootstrap({ name: 'Crash' });
  const payer = { accountId: acct.accountId, keyId: acct.keyId, grantId: acct.grantId };
  const charges = [];
  for (let i = 0; i < 5; i++) charges.push(await billing.charge({ payer, engine: 'v4', tokens: 195, route: 'tts', requestId: `crash-${i}` }));
  await billing.refund(charges[0]);
  t.is((await documents.outbox.pending(100)).length, 6, 'six entries wait in the outbox');
  db.close();

  const p = await startTestPlatform({ DATA_DIR: dataDir });
  try {
    const ledger = (await p.platform.service(coreServices.documents)).ledger;
    await waitFor(async () => (await ledger.sumByGrant(acct.grantId)).entries === 6, { what: 'six ledger entries' });

    // The relay may publish again if it dies before marking entries sent: the writer must not double them.
    const entries = await ledger.listByGrant(acct.grantId);
    await (await p.platform.service(coreServices.bus)).publish(TOPICS.ledger, entries.map((e) => ({ id: e.id, key: e.grantId, value: e })));
    await waitFor(async () => (await (await p.platform.service(coreServices.bus)).lag(TOPICS.ledger, 'ledger-writer')) === 0, { what: 'the writer to catch up' });
    const sums = await ledger.sumByGrant(acct.grantId);
    t.is(sums.entries, 6);
    t.is(sums.charged, 5 * 195);
    t.is(sums.refunded, 195);
    const reconcile = await (await p.admin(`/grants/${acct.grantId}/reconcile`)).json();
    t.true(reconcile.balanced);
    t.is(reconcile.usedTokens, 4 * 195);
  } finally {
    await p.stop();
  }
});
