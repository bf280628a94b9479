import test from 'ava';
import { TOPICS, type Bus } from '../../core/ports/bus.ts';
import type { JobEvent } from '../../core/ports/job-events.ts';
import { coreServices } from '../../core/services.ts';
import { tapEngine } from '../helpers/engine-tap.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { priceOf } from '../helpers/speech.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * A job whose audio is rendered and stored while the bus refuses its
 * `tts.job.completed` event (a broker restart) was delivered: it must not
 * be rendered again, failed or refunded. The event goes out once the bus
 * takes it, from the redelivered `tts.jobs` message. (Found by the
 * topology test: the refusal counted as a failed render attempt, and after
 * the last attempt the completed job was refunded and reported failed.)
 */

let p: TestPlatform;
test.before(async () => {
  p = await startTestPlatform({ PLUGINS: 'jobs,account', JOB_MAX_ATTEMPTS: '2', JOB_RETRY_BASE_MS: '50' });
});
test.after.always(async () => {
  await p?.stop();
});

test('a completion event the bus refuses is announced later; the job is rendered once, completed, charged once and never refunded', async (t) => {
  const bus: Bus = await p.platform.service(coreServices.bus);
  const tap = tapEngine(await p.platform.service(coreServices.engine));
  const seen: JobEvent[] = [];
  const capture = await bus.subscribe<JobEvent>({ topic: TOPICS.jobEvents, group: `announcement-test-${process.pid}`, handler: async (m) => void seen.push(m.value) });
  const publish = bus.publish;
  let refused = 0;
  // More refusals than render attempts: before the fix this ran out the job's attempts.
  bus.publish = async (topic, messages) => {
    if (topic === TOPICS.jobEvents && refused < 3) {
      refused++;
      throw new Error('bus unavailable');
    }
    return publish.call(bus, topic, messages);
  };
  try {
    const acct = await p.bootstrap({ grant: { totalTokens: 100_000 } });
    const text = 'Bản ghi này được lưu trong khi hàng đợi sự kiện tạm thời không nhận tin.';
    const submitted = await p.api('/tts', { method: 'POST', key: acct.apiKey, json: { text } });
    t.is(submitted.status, 201);
    const { jobId } = (await submitted.json()) as { jobId: string };

    await waitFor(() => seen.some((e) => e.jobId === jobId), { timeoutMs: 30_000, what: 'the completion event' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    t.is(refused, 3, 'the bus refused the event three times first');
    t.deepEqual(seen.filter((e) => e.jobId === jobId).map((e) => e.type), ['tts.job.completed'], 'announced completed, never failed');
    t.is(tap.requests.length, 1, 'rendered once');
    const job = (await (await p.api(`/tts/${jobId}`, { key: acct.apiKey })).json()) as { status: string };
    t.is(job.status, 'completed');
    const reconcile = await waitFor(async () => {
      const r = (await (await p.admin(`/grants/${acct.grantId}/reconcile`)).json()) as { usedTokens: number; ledgerCharged: number; ledgerRefunded: number };
      return r.ledgerCharged > 0 ? r : null;
    }, { what: 'the charge in the ledger' });
    t.like(reconcile, { usedTokens: priceOf(text), ledgerCharged: priceOf(text), ledgerRefunded: 0 });
  } finally {
    bus.publish = publish;
    tap.restore();
    await capture.stop();
  }
});
