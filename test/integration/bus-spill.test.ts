/**
 * "Nothing already accepted is lost: events." An outcome event the bus
 * refuses (a broker out of reach past the publish deadline) is kept in the
 * system of record and published by the spill relay once the bus takes
 * messages again (core/bus-spill.ts); meanwhile the request settles as if
 * it were published (its hold released, its job's mark cleared), and usage
 * counts it once, late.
 */
import test from 'ava';
import { startTestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait.ts';
import { TOPICS } from '../../core/ports/bus.ts';
import { coreServices } from '../../core/services.ts';

test('outcome events the bus refused are kept, published once it is back, and counted once; the requests settle meanwhile', async (t) => {
  const p = await startTestPlatform({ BUS_SPILL_RELAY_SECONDS: '0.2', ROLES: 'api,pipelines' });
  t.teardown(() => p.stop());
  const { apiKey } = await p.bootstrap();
  const bus = await p.platform.service(coreServices.bus);
  const documents = await p.platform.service(coreServices.documents);
  const publish = bus.publish.bind(bus);
  let refusing = true;
  let refused = 0;
  bus.publish = async (topic, messages) => {
    if (topic === TOPICS.outcomes && refusing) {
      refused++;
      throw new Error('the broker is out of reach');
    }
    return publish(topic, messages);
  };
  const usage = async () => (await (await p.api('/usage', { key: apiKey })).json()).totals;

  const speech = await p.api('/audio/speech', { method: 'POST', key: apiKey, json: { input: 'Xin chào, bạn khỏe không?', response_format: 'wav' } });
  t.is(speech.status, 200);
  await speech.arrayBuffer();
  const job = await (await p.api('/tts', { method: 'POST', key: apiKey, json: { text: 'Câu này được gửi khi hàng đợi sự kiện không nhận.' } })).json();
  t.is(job.status, 'queued');

  const spilled = (await waitFor(async () => {
    const pending = (await documents.spill.pending(100)).filter((m) => m.topic === TOPICS.outcomes);
    return pending.length === 2 ? pending : undefined;
  }, { what: 'both outcome events to be kept' }))!;
  t.deepEqual(spilled.map((m) => (m.value as { route: string }).route).sort(), ['audio_speech', 'tts']);
  // Settled as if published: the speech's hold released, the job's publication marked done.
  await waitFor(async () => (await documents.holds.orphaned(Date.now() + 86_400_000, 10)).length === 0, { what: 'the hold to be released' });
  await waitFor(async () => (await documents.jobs.unpublished('9999-01-01T00:00:00.000Z', 10)).length === 0, { what: 'the job to be marked published' });
  await new Promise((resolve) => setTimeout(resolve, 600));
  t.true(refused > 2, 'the relay tried again while the bus refused');
  t.is((await usage()).requests, 0, 'nothing reached usage yet');

  refusing = false;
  await waitFor(async () => (await documents.spill.pending(10)).length === 0, { what: 'the relay to publish what was kept' });
  const totals = await waitFor(async () => {
    const now = await usage();
    return now.requests >= 2 ? now : undefined;
  }, { what: 'usage to count both requests' });
  t.like(totals, { requests: 2, ok: 1, queued: 1 });
});
