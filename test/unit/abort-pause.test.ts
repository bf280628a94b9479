import test from 'ava';
import { getEventListeners, setMaxListeners } from 'node:events';
import { pauseUnlessAborted } from '../../core/speechkit/abort.ts';

// The inference worker pauses between a failed render's attempts on its shutdown signal, which lives as long as the process.

test('pauses that run out take their listener off the long-lived signal: none is left after many retries', async (t) => {
  const controller = new AbortController();
  // As the worker does with its hand-back signal: 25 pauses at once are expected here, not a leak.
  setMaxListeners(0, controller.signal);
  for (let i = 0; i < 25; i++) await pauseUnlessAborted(1, controller.signal);
  await Promise.all(Array.from({ length: 25 }, () => pauseUnlessAborted(2, controller.signal)));
  t.is(getEventListeners(controller.signal, 'abort').length, 0);
});

test('a pause ends as soon as the signal fires, and one asked for after it fired does not wait', async (t) => {
  const controller = new AbortController();
  const started = Date.now();
  const pausing = pauseUnlessAborted(60_000, controller.signal);
  setTimeout(() => controller.abort(), 20);
  await pausing;
  t.true(Date.now() - started < 5_000);
  t.is(getEventListeners(controller.signal, 'abort').length, 0);
  await pauseUnlessAborted(60_000, controller.signal);
  t.pass();
});
