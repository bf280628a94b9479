import test from 'ava';
import { PassThrough } from 'node:stream';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { OutputClosedError, writeWithBackPressure } from '../../core/speechkit/audio/back-pressure.ts';
import { storeTimelineWav } from '../../core/speechkit/timeline/wav-blob.ts';
import { createDirectoryBlobs } from '../../core/adapters/blobs/directory.ts';
import type { Blobs } from '../../core/ports/blobs.ts';

/** A wait that does not end is the fault: fail after a while instead of hanging the suite. */
const within = <T>(work: Promise<T>, ms = 10_000) =>
  Promise.race([work, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('hung')), ms))]);

test('a write to a stream its reader destroyed ends with OutputClosedError, before or while waiting for it to drain', async (t) => {
  const gone = new PassThrough();
  gone.destroy();
  await t.throwsAsync(within(writeWithBackPressure(gone, Buffer.alloc(4))), { instanceOf: OutputClosedError });

  const stalled = new PassThrough({ highWaterMark: 8 });
  const waiting = within(writeWithBackPressure(stalled, Buffer.alloc(64)));
  setTimeout(() => stalled.destroy(), 20);
  await t.throwsAsync(waiting, { instanceOf: OutputClosedError });
});

test('a timeline whose store fails mid-write ends with the store\'s error (a full disk is a 503), not a hang or a closed stream', async (t) => {
  const blobs = createDirectoryBlobs(mkdtempSync(path.join(tmpdir(), 'timeline-full-')));
  const full = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  const failing: Blobs = {
    ...blobs,
    async put(_key, data) {
      if (!Buffer.isBuffer(data)) for await (const _part of data) break;
      throw full;
    },
  };
  const err = await t.throwsAsync(within(storeTimelineWav(failing, 'srt/a.wav', 24_000, async (timeline) => {
    for (let i = 0; i < 20; i++) await timeline.append(Buffer.alloc(48_000));
  })));
  t.is(err, full);
});
