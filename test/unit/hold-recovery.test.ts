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
import type { Documents, HoldsStore } from '../../core/ports/documents.ts';
import type { BillingService } from '../../core/billing/service.ts';
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

/**
 * The recovery on a clock the test moves, over the store with its beats
 * counted (and failing while `failing` is set).
 */
function recovery(documents: Documents, recoverer: BillingService, start: number, published: Published[] = [], lines: string[] = []) {
  const state = { clock: start, beats: 0, failing: false };
  const holds: HoldsStore = {
    ...documents.holds,
    beat: async (instance, untilMs) => {
      if (state.failing) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      await documents.holds.beat(instance, untilMs);
      state.beats++;
    },
  };
  const stop = startHoldRecovery({
    holds, instance: 'proc_recoverer', leaseMs: LEASE_MS, refund: (c) => recoverer.refund(c), bus: recordingBus(published),
    logger: quietLogger(lines), now: () => state.clock, intervalMs: 5,
  });
  /** the clock moves on once the recovery has beaten again (a pass ran at the old time) */
  const advance = async (ms: number) => {
    const seen = state.beats;
    await waitFor(async () => state.beats > seen, { what: 'a pass of the recovery' });
    state.clock += ms;
  };
  return { state, stop, advance };
}

type Published = { topic: string; message: OutgoingMessage<OutcomeEvent> };

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

test('a held charge of a process that stopped beating is refunded once and its hold released; live, unheld and self-refunded ones are left', async (t) => {
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

  // Recovery starts an hour later; the live process beats meanwhile; the dead one stopped long ago.
  const later = Date.parse(cut.at) + 3_600_000;
  await documents.holds.beat('proc_alive', later + 10 * LEASE_MS);
  await documents.holds.beat('proc_dead', Date.parse(cut.at) + LEASE_MS);
  const lines: string[] = [];
  const published: Published[] = [];
  const { stop, advance } = recovery(documents, recoverer, later, published, lines);
  t.teardown(stop);
  // Its first lease it only beats: the others may not have beaten since a store outage.
  await advance(LEASE_MS / 2);
  await advance(0);
  t.is(await used(), 3 * 195, 'nothing judged within the first lease');
  await advance(LEASE_MS / 2);
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
  t.deepEqual(await documents.holds.orphaned(later + 100 * LEASE_MS, 100), []);
  // A second recoverer finds nothing left to do: refunds are once per charge.
  t.false(await recoverer.refund(cut));
});

test('a process serves requests before its first beat lands: a hold younger than a lease is never an orphan', async (t) => {
  const { db, documents, dead, deadEarlier, recoverer, payer, used } = await setup();
  t.teardown(() => db.close());
  const old = await deadEarlier.charge({ payer, engine: 'v4', tokens: 195, route: 'audio_speech', requestId: 'req_old', hold: true });
  const young = await dead.charge({ payer, engine: 'v4', tokens: 195, route: 'audio_speech', requestId: 'req_young', hold: true });
  const youngAt = Date.parse(young.at);
  t.deepEqual((await documents.holds.orphaned(youngAt, 100)).map((e) => e.id), [old.id, young.id], 'no beat ever: the store lists both');
  // The recoverer has beaten for a lease and a half when it looks; the young charge is half a lease old.
  const { stop, advance } = recovery(documents, recoverer, youngAt - LEASE_MS);
  t.teardown(stop);
  await advance(1.5 * LEASE_MS);
  await waitFor(async () => (await documents.holds.orphaned(youngAt, 100)).length === 1, { what: 'the old orphan to be settled' });
  await advance(0);
  await stop();
  t.deepEqual((await documents.holds.orphaned(youngAt, 100)).map((e) => e.id), [young.id]);
  t.is(await used(), 195, 'the old one refunded; the young one kept: a hold must be a lease old to be an orphan');
});

test('after a store outage that stopped every beat, a live process gets a lease to beat again before its holds are judged', async (t) => {
  const { db, documents, alive, recoverer, payer, used } = await setup();
  t.teardown(() => db.close());
  const running = await alive.charge({ payer, engine: 'v4', tokens: 195, route: 'tts_stream', requestId: 'req_long', hold: true });
  const start = Date.parse(running.at);
  await documents.holds.beat('proc_alive', start + LEASE_MS);
  const { state, stop, advance } = recovery(documents, recoverer, start);
  t.teardown(stop);
  await advance(LEASE_MS / 2);
  // The store goes away for two leases: nobody beats, proc_alive's lease runs out.
  await advance(0);
  state.failing = true;
  state.clock += 2 * LEASE_MS;
  await new Promise((resolve) => setTimeout(resolve, 50));
  state.failing = false;
  // The store is back: the recoverer beats again at once; proc_alive beats a moment later, within the lease.
  await advance(LEASE_MS / 6);
  await documents.holds.beat('proc_alive', state.clock + LEASE_MS);
  // Both go on beating; the recoverer judges again once it has beaten for a lease.
  await advance(LEASE_MS / 2);
  await documents.holds.beat('proc_alive', state.clock + LEASE_MS);
  await advance(LEASE_MS / 2);
  await advance(0);
  await stop();
  t.is(await used(), 195, 'the long stream of the live process stays charged');
  t.deepEqual((await documents.holds.orphaned(state.clock, 100)).map((e) => e.id), [], 'its hold is not an orphan');
  t.is((await documents.holds.orphaned(state.clock + 2 * LEASE_MS, 100)).length, 1, 'and still there, for its own release');
});

test('a release that failed (the store out of reach) is retried with the next one, and by the recovery\'s pass: the request is not refunded when the process stops later', async (t) => {
  const { db, documents, payer } = await setup();
  t.teardown(() => db.close());
  let failing = true;
  const holds: HoldsStore = {
    ...documents.holds,
    release: async (list) => {
      if (failing) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      return documents.holds.release(list);
    },
  };
  const billing = createBillingService({
    documents: { ...documents, holds }, engines: defaultEngines(3), globalMultiplier: 1.3, aiRefineSurchargePerChar: 0.5, timezoneOffsetMinutes: 420, instance: 'proc_x',
  });
  const held = () => documents.holds.orphaned(Date.now() + 86_400_000, 10);
  const first = await billing.charge({ payer, engine: 'v4', tokens: 195, route: 'audio_speech', requestId: 'req_a', hold: true });
  await t.throwsAsync(billing.release([first]));
  t.is((await held()).length, 1, 'still held after the failed release');
  failing = false;
  const second = await billing.charge({ payer, engine: 'v4', tokens: 195, route: 'audio_speech', requestId: 'req_b', hold: true });
  await billing.release([second]);
  t.deepEqual(await held(), [], 'the next release took the first one along');
  // With no other request ending, the recovery's pass retries it.
  failing = true;
  const third = await billing.charge({ payer, engine: 'v4', tokens: 195, route: 'audio_speech', requestId: 'req_c', hold: true });
  await t.throwsAsync(billing.release([third]));
  failing = false;
  const stop = startHoldRecovery({
    holds: documents.holds, instance: 'proc_x', leaseMs: LEASE_MS, refund: (c) => billing.refund(c), retryReleases: () => billing.release([]),
    bus: recordingBus([]), logger: quietLogger([]), intervalMs: 5,
  });
  t.teardown(stop);
  await waitFor(async () => (await held()).length === 0, { what: 'the recovery pass to retry the release' });
});
