import test from 'ava';
import { startRelayLoop, type PassOutcome } from '../../core/relay-loop.ts';
import { createLogger } from '../../core/logger.ts';

const logger = createLogger('error');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs a loop (intervalMs 300) whose passes answer `outcomes` in turn ('idle' after them), recording when each pass ran. */
function scripted(outcomes: Array<PassOutcome | Error>, busyIntervalMs?: number) {
  const started = Date.now();
  const at: number[] = [];
  let i = 0;
  const loop = startRelayLoop({
    name: 'test relay', intervalMs: 300, busyIntervalMs, logger, flushOnStop: true,
    pass: async () => {
      at.push(Date.now() - started);
      const next = outcomes[i++] ?? 'idle';
      if (next instanceof Error) throw next;
      return next;
    },
  });
  return { at, stop: () => loop.stop() };
}

test('a full batch is followed at once, a pass that found some work after busyIntervalMs, an idle one after intervalMs', async (t) => {
  const run = scripted(['full', 'full', 'some', 'some', 'idle'], 5);
  await sleep(200);
  t.is(run.at.length, 5, `five passes in the first 200 ms: ${run.at.join(', ')} ms`);
  await sleep(250);
  t.is(run.at.length, 6, 'the pass after the idle one waited intervalMs');
  t.true(run.at[5]! - run.at[4]! >= 290);
  await run.stop();
});

test('without busyIntervalMs a pass that found some work waits intervalMs', async (t) => {
  const run = scripted(['some', 'some']);
  await sleep(150);
  t.is(run.at.length, 1);
  await run.stop();
});

test('a failed pass is retried after intervalMs, not sooner; stop drains the full batches left', async (t) => {
  const run = scripted([new Error('store gone'), 'full', 'full', 'some'], 5);
  await sleep(100);
  t.is(run.at.length, 1, 'no hurry after a failure');
  await run.stop();
  t.is(run.at.length, 4, 'the drain at stop ran the two full batches and the one after them');
});
