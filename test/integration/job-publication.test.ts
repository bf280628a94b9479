/**
 * "Nothing already accepted is lost: money, jobs, events." A `POST /tts`
 * accept's outcome event is part of the job's publication: the job's
 * pending mark goes only once that event is on the bus, so a process that
 * stops first (or a publish that fails) leaves the job to the recovery,
 * which publishes the event again, rebuilt from the stored job with the
 * request's own id and time, so that usage keeps one. The crash itself is
 * in fault-submission-crash.test.ts.
 */
import test from 'ava';
import { startTestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait.ts';
import { TOPICS, type OutgoingMessage } from '../../core/ports/bus.ts';
import type { OutcomeEvent } from '../../core/ports/analytics.ts';
import { coreServices } from '../../core/services.ts';
import { acceptOutcomeEvent } from '../../plugins/jobs/publication.ts';

const FUTURE = '9999-01-01T00:00:00.000Z';

test('the outcome rebuilt from a stored job is the event its accept published: queued, and answered from the content cache', async (t) => {
  const p = await startTestPlatform();
  t.teardown(() => p.stop());
  const { apiKey } = await p.bootstrap();
  const bus = await p.platform.service(coreServices.bus);
  const jobs = await p.platform.service(coreServices.jobs);
  const published: OutcomeEvent[] = [];
  const publish = bus.publish.bind(bus);
  bus.publish = async (topic, messages) => {
    if (topic === TOPICS.outcomes) published.push(...(messages as OutgoingMessage<OutcomeEvent>[]).map((m) => m.value));
    return publish(topic, messages);
  };
  const submit = async () => (await p.api('/tts', { method: 'POST', key: apiKey, json: { text: 'Câu này được đọc một lần, rồi lấy lại từ bộ nhớ.', speed: 1.1 } })).json();

  const queued = await submit();
  t.is(queued.status, 'queued');
  await waitFor(async () => (await jobs.get(queued.jobId))?.status === 'completed', { what: 'the job to render' });
  const hit = await submit();
  t.is(hit.status, 'completed', 'the same request again is a content-cache hit');

  for (const [jobId, result] of [[queued.jobId, 'queued'], [hit.jobId, 'cache_hit']]) {
    const event = (await waitFor(async () => published.find((e) => e.jobId === jobId), { what: `the outcome of ${jobId}` }))!;
    t.is(event.result, result);
    const job = (await jobs.get(jobId))!;
    t.deepEqual(acceptOutcomeEvent({ ...job, charge: job.charge! }), event, `${result}: the same event, so usage keeps one`);
  }
});

test('a job stays pending until its accept\'s outcome is on the bus; when neither the bus nor the spill took the outcome the recovery publishes it, and usage counts the request once', async (t) => {
  const p = await startTestPlatform({ ROLES: 'api,pipelines', JOBS_RECOVERY_INTERVAL_SECONDS: '0.2', JOBS_REPUBLISH_AFTER_SECONDS: '1', JOBS_OUTCOME_REPUBLISH_AFTER_SECONDS: '1' });
  t.teardown(() => p.stop());
  const { apiKey } = await p.bootstrap();
  const bus = await p.platform.service(coreServices.bus);
  const jobs = await p.platform.service(coreServices.jobs);
  const { spill } = await p.platform.service(coreServices.documents);
  const publish = bus.publish.bind(bus);
  const keep = spill.add.bind(spill);
  let letThrough!: () => void;
  let gate: Promise<void> | null = new Promise<void>((resolve) => (letThrough = resolve));
  let failNext = false;
  bus.publish = async (topic, messages) => {
    if (topic === TOPICS.outcomes && gate) await gate;
    if (topic === TOPICS.outcomes && failNext) {
      failNext = false;
      throw new Error('the bus refused the outcome');
    }
    return publish(topic, messages);
  };
  let spillRefuses = false;
  spill.add = async (messages) => {
    if (spillRefuses) throw new Error('the store refused the spilled outcome');
    return keep(messages);
  };
  t.teardown(() => letThrough());
  const pending = async () => jobs.unpublished(FUTURE, 100);
  const submit = async (text: string) => (await (await p.api('/tts', { method: 'POST', key: apiKey, json: { text } })).json()).jobId as string;

  const waiting = await submit('Câu thứ nhất chờ kết quả của nó lên hàng đợi.');
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.true((await pending()).includes(waiting), 'pending while its outcome waits for the bus');
  letThrough();
  gate = null;
  await waitFor(async () => !(await pending()).includes(waiting), { what: 'the mark to go once the outcome is published' });

  failNext = true;
  spillRefuses = true;
  const refused = await submit('Câu thứ hai mà kết quả bị hàng đợi từ chối.');
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.false(failNext, 'its outcome publish was tried and failed');
  spillRefuses = false;
  t.deepEqual(await spill.pending(10), [], 'and was not kept either');
  // The recovery publishes it once it is JOBS_OUTCOME_REPUBLISH_AFTER_SECONDS old, and marks it.
  await waitFor(async () => !(await pending()).includes(refused), { timeoutMs: 15_000, what: 'the recovery to publish the accept' });
  const usage = await waitFor(async () => {
    const report = await (await p.api('/usage', { key: apiKey })).json();
    return report.totals.requests >= 2 ? report : undefined;
  }, { what: 'usage to count both accepts' });
  t.like(usage.totals, { requests: 2, queued: 2 });
});
