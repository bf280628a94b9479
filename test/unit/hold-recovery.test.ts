/**
 * SPEC Billing rule 3 (no audio, refunded) across a crash: the charge of a
 * request whose process died before the request settled is refunded once,
 * by whichever process notices; a request still being answered, or just
 * started, is left alone.
 */
import test from 'ava';
import { openMemoryDb } from '../../core/adapters/embedded-db.ts';
import { createSqliteDocuments } from '../../core/adapters/documents/sqlite.ts';
import { createBillingService } from '../../core/billing/service.ts';
import { startHoldRecovery } from '../../core/billing/hold-recovery.ts';
import { createAdminService } from '../../plugins/admin/service.ts';
import { defaultEngines } from '../../config/engines.ts';
import type { Logger } from '../../core/logger.ts';
import type { Bus, OutgoingMessage } from '../../core/ports/bus.ts';
import type { OutcomeEvent } from '../../core/ports/analytics.ts';
import { waitFor } from '../helpers/wait.ts';

const LEASE_MS = 60_000;

function quietLogger(lines: string[]): Logger {
  const log = (msg: string) => void lines.push(msg);
  const logger = { debug: log, info: log, warn: log, error: log, child: () => logger } as unknown as Logger;
  return logger;
}

/** Records what the recovery publishes. */
function recordingBus(published: Array<{ topic: string; message: OutgoingMessage<OutcomeEvent> }>): Bus {
  return { publish: async (topic: string, messages: OutgoingMessage<OutcomeEvent>[]) => void published.push(...messages.map((message) => ({ topic, message }))) } as unknown as Bus;
}

async function setup() {
  const db = openMemoryDb();
  const documents = createSqliteDocuments(db);
  const make = (instance: string, clock?: () => Date) => createBillingService({
    documents, engines: defaultEngines(3), globalMultiplier: 1.3, aiRefineSurchargePerChar: 0.5, timezoneOffsetMinutes: 420, instance, clock,
  });
  const [dead, alive, recoverer] = [make('proc_dead'), make('proc_alive'), make('proc_recoverer')];
  // the same dead process, an hour earlier
  const deadEarlier = make('proc_dead', () => new Date(Date.now() - 3_600_000));
  const acct = await createAdminService({ documents, billing: recoverer }).bootstrap({ name: 'Holds' });
  const payer = { accountId: acct.accountId, keyId: acct.keyId, grantId: acct.grantId };
  const used = async () => (await documents.grants.get(acct.grantId))!.usedTokens;
  return { db, documents, dead, deadEarlier, alive, recoverer, payer, used };
}

test('a held charge of a process that stopped beating is refunded once and its hold released; live and young holds are left', async (t) => {
  const { db, documents, dead, alive, recoverer, payer, used } = await setup();
  t.teardown(() => db.close());
  let n = 0;
  const charge = (billing: typeof dead, hold: boolean) => billing.charge({ payer, engine: 'v4', tokens: 195, route: 'tts_stream', requestId: `req_${++n}`, hold });
  const cut = await charge(dead, true);
  const refundedBefore = await charge(dead, true);
  await dead.refund(refundedBefore); // the request refunded itself, then the process died before releasing
  await charge(dead, false); // no hold (a job's charge): never touched
  const running = await charge(alive, true);
  t.is(await used(), 3 * 195);

  // Recovery runs an hour later; the live process beats meanwhile; one more held charge is brand new.
  const later = Date.parse(cut.at) + 3_600_000;
  await documents.holds.beat('proc_alive', later + LEASE_MS);
  await documents.holds.beat('proc_dead', Date.parse(cut.at) + LEASE_MS);
  const lines: string[] = [];
  const published: Array<{ topic: string; message: OutgoingMessage<OutcomeEvent> }> = [];
  const stop = startHoldRecovery({ holds: documents.holds, instance: 'proc_recoverer', leaseMs: LEASE_MS, refund: (c) => recoverer.refund(c), bus: recordingBus(published), logger: quietLogger(lines), now: () => later });
  t.teardown(stop);
  await waitFor(async () => (await documents.holds.orphaned(later, 100)).length === 0, { what: 'the orphans to be released' });
  await stop();
  t.is(await used(), 2 * 195, 'the cut request is refunded, the self-refunded one not twice, the unheld and running ones kept');
  t.true(lines.some((l) => l.includes('never settled')));
  // Usage hears of the cut request once, as an error refunded in full, under the request's own outcome id.
  t.deepEqual(published.map((p) => p.topic), ['request.outcomes']);
  t.like(published[0]!.message, { id: 'out_req_1', key: payer.accountId, value: {
    id: 'out_req_1', requestId: 'req_1', accountId: payer.accountId, keyId: payer.keyId, grantId: cut.grantId, route: 'tts_stream',
    status: 500, result: 'error', tokensCharged: 195, tokensRefunded: 195, errorCode: 'synthesis_failed',
  } });
  // The running request settles normally afterwards.
  await alive.release([running]);
  t.deepEqual(await documents.holds.orphaned(later + 10 * LEASE_MS, 100), []);
  // A second recoverer finds nothing left to do: refunds are once per charge.
  t.false(await recoverer.refund(cut));
});

test('a process serves requests before its first beat lands: a hold younger than a lease is never an orphan', async (t) => {
  const { db, documents, dead, deadEarlier, recoverer, payer, used } = await setup();
  t.teardown(() => db.close());
  const old = await deadEarlier.charge({ payer, engine: 'v4', tokens: 195, route: 'audio_speech', requestId: 'req_old', hold: true });
  const young = await dead.charge({ payer, engine: 'v4', tokens: 195, route: 'audio_speech', requestId: 'req_young', hold: true });
  const now = Date.parse(young.at) + LEASE_MS / 2;
  t.deepEqual((await documents.holds.orphaned(now, 100)).map((e) => e.id), [old.id, young.id], 'no beat ever: the store lists both');
  const stop = startHoldRecovery({ holds: documents.holds, instance: 'proc_recoverer', leaseMs: LEASE_MS, refund: (c) => recoverer.refund(c), bus: recordingBus([]), logger: quietLogger([]), now: () => now });
  await waitFor(async () => (await documents.holds.orphaned(now, 100)).length === 1, { what: 'the old orphan to be settled' });
  await stop();
  t.deepEqual((await documents.holds.orphaned(now, 100)).map((e) => e.id), [young.id]);
  t.is(await used(), 195, 'the old one refunded; the young one kept: the recovery waits out one lease before calling a hold orphaned');
});
