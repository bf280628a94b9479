import test from 'ava';
import { BLOB_SWEEP_DEFAULTS, startBlobSweep } from '../../core/blob-sweep.ts';
import { coreWorkers } from '../../core/kernel/platform.ts';
import { ServiceRegistry } from '../../core/kernel/registry.ts';
import type { Logger } from '../../core/logger.ts';
import type { Blobs } from '../../core/ports/blobs.ts';
import { coreServices, createServiceFactory } from '../../core/services.ts';

type Line = [level: string, msg: string, fields?: Record<string, unknown>];
function recordingLogger(): Logger & { lines: Line[] } {
  const lines: Line[] = [];
  const log = (level: string) => (msg: string, fields?: Record<string, unknown>) => void lines.push([level, msg, fields]);
  return { lines, debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error'), child: () => recordingLogger() } as unknown as Logger & { lines: Line[] };
}

/** Blobs whose sweep answers from `answers` in turn (0 once they run out); an Error answer is thrown. */
function sweepingBlobs(answers: Array<number | Error>): Blobs & { calls: Array<{ olderThan: Date; limit: number }> } {
  const calls: Array<{ olderThan: Date; limit: number }> = [];
  return {
    calls,
    async sweepOrphans(olderThan: Date, limit: number) {
      calls.push({ olderThan, limit });
      const answer = answers.shift() ?? 0;
      if (answer instanceof Error) throw answer;
      return answer;
    },
  } as unknown as Blobs & { calls: Array<{ olderThan: Date; limit: number }> };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Waits (at most 5 s) until `done` holds; timing-based checks stay loose on a busy machine. */
async function until(done: () => boolean): Promise<void> {
  for (let waited = 0; !done() && waited < 5000; waited += 10) await sleep(10);
}

test('the sweep waits its first delay, repeats at once while a call removed a full batch, and logs what it removed', async (t) => {
  const logger = recordingLogger();
  const blobs = sweepingBlobs([3, 3, 1]);
  const stop = startBlobSweep({ blobs, logger, batch: 3, firstDelayMs: 80, intervalMs: 60_000, maxAgeMs: 6 * 3600_000, now: () => Date.parse('2025-06-01T12:00:00Z') });
  t.teardown(stop);
  await sleep(30);
  t.is(blobs.calls.length, 0, 'nothing before the first delay');
  await until(() => logger.lines.length >= 3);
  await sleep(50);
  t.is(blobs.calls.length, 3, 'full, full, then a short batch; the next pass is an interval away');
  t.deepEqual(blobs.calls[0], { olderThan: new Date('2025-06-01T06:00:00Z'), limit: 3 });
  const infos = logger.lines.filter(([level]) => level === 'info');
  t.deepEqual(infos.map(([, , fields]) => fields?.uploads), [3, 3, 1]);
});

test('a failed sweep is logged as a warning and retried on the next interval; stop ends the loop', async (t) => {
  const logger = recordingLogger();
  const blobs = sweepingBlobs([new Error('mongo is out of reach'), 2]);
  const stop = startBlobSweep({ blobs, logger, firstDelayMs: 1, intervalMs: 60 });
  await until(() => logger.lines.length >= 1);
  t.is(blobs.calls.length, 1);
  t.true(logger.lines.some(([level, msg]) => level === 'warn' && /blob orphan sweep failed/.test(msg)));
  await until(() => logger.lines.length >= 2);
  t.true(blobs.calls.length >= 2, 'retried');
  t.true(logger.lines.some(([level, , fields]) => level === 'info' && fields?.uploads === 2));
  await stop();
  const after = blobs.calls.length;
  await sleep(150);
  t.is(blobs.calls.length, after, 'no pass after stop');
});

test('stop before the first pass: no pass at all; blobs without sweepOrphans: nothing runs', async (t) => {
  const blobs = sweepingBlobs([1]);
  await startBlobSweep({ blobs, logger: recordingLogger(), firstDelayMs: 30 })();
  await sleep(60);
  t.is(blobs.calls.length, 0);
  await t.notThrowsAsync(startBlobSweep({ blobs: {} as Blobs, logger: recordingLogger(), firstDelayMs: 1 })());
});

test('the defaults: uploads idle 6 hours, a pass every 10 minutes, batches of 100', (t) => {
  t.deepEqual(BLOB_SWEEP_DEFAULTS, { maxAgeMs: 6 * 3600_000, intervalMs: 10 * 60_000, firstDelayMs: 60_000, batch: 100 });
});

test('core declares the blob orphan sweep for the pipelines role only, on the configured blobs', async (t) => {
  const registry = new ServiceRegistry();
  const blobs = sweepingBlobs([]);
  registry.provide(createServiceFactory({ ref: coreServices.blobs, deps: {}, create: () => blobs }), 'core');
  registry.provide(createServiceFactory({ ref: coreServices.logger, deps: {}, create: () => recordingLogger() }), 'core');
  const sweeps = coreWorkers(registry).filter((w) => w.name === 'core:blob-orphan-sweep');
  t.deepEqual(sweeps.map((w) => w.role), ['pipelines']);
  // startPlatform starts a worker only in a process with its role (config.roles.includes(worker.role)).
  const stop = await sweeps[0]!.start();
  await stop();
  t.is(blobs.calls.length, 0, 'stopped before its first pass');
});
