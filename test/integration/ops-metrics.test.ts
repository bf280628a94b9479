import test from 'ava';
import { randomUUID } from 'node:crypto';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait.ts';
import { longText } from '../helpers/speech.ts';
import { coreServices } from '../../core/services.ts';

/**
 * The metrics the dashboard and alerts read (issue 15), scraped from the ops
 * listener of a real platform: stream slots, queue depth, usage events
 * written, and the reconciler's drift. No inference role here, so jobs stay
 * queued; streams synthesise in process.
 */
let p: TestPlatform;
test.before(async () => {
  p = await startTestPlatform({
    ROLES: 'api,pipelines',
    MODULES: 'inference,pipelines/ledger-writer,pipelines/usage-aggregator,pipelines/reconciler',
    STREAM_CAPACITY: '7',
    RECONCILER_INTERVAL_SECONDS: '1',
    RECONCILER_INITIAL_DELAY_SECONDS: '0',
    RECONCILER_SETTLE_SECONDS: '0',
  });
});
test.after.always(async () => {
  await p?.stop();
});

async function scrape(): Promise<string> {
  const res = await fetch(`${p.opsUrl}/metrics`);
  return res.text();
}

/** The value of one series (`name` or `name{labels}`) in the exposition text, or null. */
function valueOf(text: string, series: string): number | null {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return null;
}

test.serial('tts_queue_depth counts jobs queued or rendering', async (t) => {
  const { apiKey } = await p.bootstrap();
  t.is(valueOf(await scrape(), 'tts_queue_depth'), 0);
  for (const n of [1, 2]) {
    const res = await p.api('/tts', { method: 'POST', key: apiKey, json: { text: `Công việc số ${n} đang chờ trong hàng đợi.` } });
    t.is(res.status, 201);
  }
  t.is(valueOf(await scrape(), 'tts_queue_depth'), 2);
});

test.serial('stream_slots_in_use shows an open stream against stream_slots_capacity, and drops when it ends', async (t) => {
  const { apiKey } = await p.bootstrap();
  const res = await p.api('/tts/stream', { method: 'POST', key: apiKey, json: { text: longText(40), outputFormat: 'pcm' } });
  t.is(res.status, 200);
  const reader = res.body!.getReader();
  await reader.read(); // the stream is open and producing
  const open = await scrape();
  t.is(valueOf(open, 'stream_slots_in_use'), 1);
  t.is(valueOf(open, 'stream_slots_capacity'), 7);
  await reader.cancel();
  await waitFor(async () => valueOf(await scrape(), 'stream_slots_in_use') === 0, { what: 'the slot to be released' });
  t.pass();
});

test.serial('usage_events_written_total counts the outcomes the aggregator wrote', async (t) => {
  const written = await waitFor(async () => {
    const value = valueOf(await scrape(), 'usage_events_written_total{kind="outcome"}');
    return value !== null && value >= 3 ? value : 0;
  }, { timeoutMs: 15_000, what: 'three outcomes (two jobs, one stream) written' });
  t.true(written >= 3);
});

test.serial('the reconciler reports a ledger entry no grant paid as drift in ledger_reconciliation_* metrics', async (t) => {
  const { grantId, accountId } = await p.bootstrap();
  // Everything charged so far reaches the ledger: runs come back clean.
  await waitFor(async () => {
    const text = await scrape();
    return valueOf(text, 'ledger_reconciliation_drifted_grants') === 0 && (valueOf(text, 'ledger_reconciliation_grants_checked') ?? 0) >= 3;
  }, { timeoutMs: 20_000, what: 'a clean reconciliation run' });

  const documents = await p.platform.service(coreServices.documents);
  const id = `chg_${randomUUID()}`;
  await documents.ledger.append({
    id, kind: 'charge', grantId, accountId, keyId: null, chargeId: id, requestId: null, route: 'tts', tokens: 100,
    dayKey: null, weekKey: null, at: new Date().toISOString(),
  });
  const text = await waitFor(async () => {
    const body = await scrape();
    return valueOf(body, 'ledger_reconciliation_drifted_grants') === 1 && valueOf(body, 'ledger_reconciliation_drift_tokens') === 100 ? body : '';
  }, { timeoutMs: 20_000, what: 'the drift to be reported' });
  t.true((valueOf(text, 'ledger_reconciliation_runs_total{result="drift"}') ?? 0) >= 1);
  t.true((valueOf(text, 'ledger_reconciliation_last_success_timestamp_seconds') ?? 0) > Date.now() / 1000 - 60);
});
