import test from 'ava';
import { startJobRecovery } from '../../plugins/jobs/publication.ts';
import { createLogger } from '../../core/logger.ts';
import type { JobRecord, JobsStore } from '../../core/ports/jobs.ts';
import type { OutgoingMessage } from '../../core/ports/bus.ts';

const SECOND = 1000;

function job(id: string, ageMs: number, status: JobRecord['status'] = 'queued'): JobRecord {
  const createdAt = new Date(Date.now() - ageMs).toISOString();
  return {
    id, accountId: 'acc_1', keyId: 'key_1', status, source: 'tts', text: 'Xin chào.', voiceId: 'v', voiceName: 'V', engine: 'v4', emotion: 'natural',
    speed: 1, aiRefine: false, textLength: 9, cacheKey: 'c', audioKey: null, durationSeconds: null, processingMs: null, attempts: 0,
    charge: { id: `chg_${id}`, grantId: 'grt_1', accountId: 'acc_1', keyId: 'key_1', tokens: 195, engine: 'v4', route: 'tts', requestId: `req_${id}`, dayKey: 'd', weekKey: 'w', at: createdAt },
    leaseOwner: null, leaseUntil: null, errorCode: null, error: null, refunded: false, createdAt, startedAt: null, completedAt: null,
  };
}

/** The recovery over a fake store: `pending` are the jobs whose publication is not done; `ghost` ids are pending with no job. */
function harness(pending: JobRecord[], ghosts: string[] = []) {
  const marked: string[] = [];
  const sent: Array<[string, OutgoingMessage[]]> = [];
  const store = {
    async repair() { return { abandoned: 0, healed: 0 }; },
    async unpublished(before: string) {
      return [...pending.filter((j) => j.createdAt < before && !marked.includes(j.id)).map((j) => j.id), ...ghosts.filter((id) => !marked.includes(id))];
    },
    async getMany(ids: string[]) { return pending.filter((j) => ids.includes(j.id)); },
    async markPublished(ids: string[]) { marked.push(...ids); },
  } as unknown as JobsStore;
  const publisher = { async publish(topic: string, messages: OutgoingMessage[]) { sent.push([topic, messages]); } };
  const loop = startJobRecovery({ jobs: store, publisher, logger: createLogger('silent') }, {
    intervalMs: 20, republishAfterMs: 10 * SECOND, outcomeAfterMs: 150 * SECOND, submissionTimeoutMs: 60 * SECOND,
  });
  return { marked, sent, stop: () => loop.stop() };
}

const ids = (sent: Array<[string, OutgoingMessage[]]>, topic: string) => sent.filter(([name]) => name === topic).flatMap(([, messages]) => messages.map((m) => m.id));

test('a job left pending is handed over once after republishAfterMs; its accept\'s outcome waits for outcomeAfterMs (past the bus\'s publish deadline)', async (t) => {
  const young = job('job_young', 5 * SECOND);
  const stalled = job('job_stalled', 30 * SECOND);
  const h = harness([young, stalled]);
  t.teardown(h.stop);
  await new Promise((resolve) => setTimeout(resolve, 150));
  t.deepEqual(ids(h.sent, 'tts.jobs'), ['job_stalled'], 'handed over once over several passes; the young one is its own process\'s');
  t.deepEqual(ids(h.sent, 'request.outcomes'), [], 'a live process may still publish its outcome: not yet');
  t.deepEqual(h.marked, [], 'still pending');
});

test('a job pending past outcomeAfterMs gets its accept\'s outcome published and is marked done; an ended one needs no message, a missing one is marked', async (t) => {
  const old = job('job_old', 200 * SECOND);
  const ended = job('job_ended', 200 * SECOND, 'completed');
  const h = harness([old, ended], ['job_gone']);
  t.teardown(h.stop);
  await new Promise((resolve) => setTimeout(resolve, 150));
  t.deepEqual(ids(h.sent, 'tts.jobs'), ['job_old']);
  t.deepEqual(ids(h.sent, 'request.outcomes').sort(), ['out_req_job_ended', 'out_req_job_old']);
  t.deepEqual([...h.marked].sort(), ['job_ended', 'job_gone', 'job_old']);
});
