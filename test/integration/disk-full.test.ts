import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait.ts';
import { openEmbeddedDb } from '../../core/adapters/embedded-db.ts';
import { checkpointInBackground, type CheckpointResult } from '../../core/adapters/wal-checkpointer.ts';

/**
 * The embedded defaults on a disk that fills up: every write fails with
 * SQLITE_FULL (and ENOSPC for the audio directory). Requests that need a
 * write are refused with 503 SERVICE_UNAVAILABLE and Retry-After, nothing
 * charged, instead of a 500; reads go on; the outcome events of the refused
 * requests wait in the bus's publish retry and reach the usage analytics
 * once space is freed. The disk is a small tmpfs mounted for the test, which
 * needs root (CI runs as root); elsewhere the test says why it skipped. The
 * two tests share the disk, so they run one after the other.
 */
const mountPoint = mkdtempSync(path.join(tmpdir(), 'vieneu-disk-full-'));
let mountProblem: string | null = null;
try {
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=32m', 'tmpfs', mountPoint], { stdio: 'pipe' });
} catch (err) {
  mountProblem = String((err as { stderr?: Buffer }).stderr ?? (err as Error).message).trim().split('\n')[0] || 'mount failed';
}

const innerMounts: string[] = [];
const umount = (dir: string) => {
  try {
    execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
  } catch (err) {
    console.log(`disk-full test: could not unmount ${dir}: ${String((err as { stderr?: Buffer }).stderr ?? err).trim()}`);
  }
};
const unmount = () => {
  for (const inner of innerMounts.reverse()) umount(inner);
  if (mountProblem === null) umount(mountPoint);
  rmSync(mountPoint, { recursive: true, force: true });
};
/** Copies the WAL into the file and truncates it to nothing (from a connection of the test's own). */
const emptyWal = (file: string) => {
  const db = new Database(file);
  try {
    for (let i = 0; i < 100; i++) {
      const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
      if (result.busy === 0 && statSync(`${file}-wal`).size === 0) return;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    }
    throw new Error('the WAL could not be emptied');
  } finally {
    db.close();
  }
};

/** Fills the file system holding `dir`, leaving `leave` bytes; answers the filler's path. */
const fill = (dir: string, leave = 0) => {
  const free = statfsSync(dir);
  const filler = path.join(dir, 'filler');
  writeFileSync(filler, Buffer.alloc(Math.max(0, free.bavail * free.bsize - leave)));
  return filler;
};

if (mountProblem !== null) {
  console.log(`disk-full test: cannot mount a tmpfs to fill (${mountProblem}); skipping`);
  test.skip('a full disk: 503s and kept outcome events, jobs that wait, WAL checkpoints tried again', () => {});
  unmount();
} else {
  test.after.always(unmount);

  test.serial('a full disk refuses writes with 503 and Retry-After, charges nothing, and keeps the refused requests\' outcome events', async (t) => {
    const p = await startTestPlatform({ DATA_DIR: path.join(mountPoint, 'data') });
    const filler = path.join(mountPoint, 'filler');
    try {
      const { apiKey } = await p.bootstrap({ grant: { totalTokens: 100_000 } });
      const balance = async () => ((await (await p.api('/balance', { key: apiKey })).json()) as { remaining: number }).remaining;
      const before = await balance();

      // The WAL file keeps its size when it starts over, so writes could go on inside it on a full disk for a
      // while (they did in one run out of three). Emptied first, it must grow for the next write.
      emptyWal(path.join(mountPoint, 'data', 'platform.db'));
      fill(mountPoint);

      const refused = [];
      for (let i = 0; i < 3; i++) {
        const res = await p.api('/tts', { method: 'POST', key: apiKey, json: { text: `Xin chào, yêu cầu số ${i} khi đĩa đầy.` } });
        const body = (await res.json()) as { code?: string; retryAfterSeconds?: number };
        refused.push({ status: res.status, code: body.code, retryAfter: res.headers.get('retry-after') });
      }
      t.deepEqual(refused, Array.from({ length: 3 }, () => ({ status: 503, code: 'SERVICE_UNAVAILABLE', retryAfter: '5' })));
      const speech = await p.api('/audio/speech', { method: 'POST', key: apiKey, json: { model: 'tts-1', input: 'Xin chào khi đĩa đầy.' } });
      t.is(speech.status, 503, 'the compatible route too');
      t.like(await speech.json(), { error: { type: 'api_error', code: null } });
      t.is(await balance(), before, 'reads go on, and nothing was charged');

      rmSync(filler);
      const accepted = await p.api('/tts', { method: 'POST', key: apiKey, json: { text: 'Xin chào, đĩa đã có chỗ.' } });
      t.is(accepted.status, 201, 'writes resume once space is freed');

      // The four refusals' outcome events were published while the disk was full: none lost.
      const usage = await waitFor(async () => {
        const body = (await (await p.api('/usage', { key: apiKey })).json()) as { totals: { requests: number; error: number } };
        return body.totals.requests >= 5 ? body : null;
      }, { timeoutMs: 30_000, what: 'the outcome events in /usage' });
      t.like(usage!.totals, { requests: 5, error: 4 });
    } finally {
      rmSync(filler, { force: true });
      await p.stop();
    }
  });

  test.serial('a full audio disk: a whole WAV is 503 and refunded, and the jobs rendering meanwhile wait until space is freed, none failed or refunded', async (t) => {
    const dataDir = path.join(mountPoint, 'jobs');
    const blobs = path.join(dataDir, 'blobs');
    mkdirSync(blobs, { recursive: true });
    // The audio directory on a disk of its own, so that the job is accepted and only its audio cannot be written.
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', blobs]);
    innerMounts.push(blobs);
    // JOB_MAX_ATTEMPTS (3) quick tries 50 ms apart: without the wait the job failed within a second.
    const p = await startTestPlatform({ DATA_DIR: dataDir, JOB_RETRY_BASE_MS: '50' });
    try {
      const { apiKey } = await p.bootstrap({ grant: { totalTokens: 100_000 } });
      const filler = fill(blobs);
      const balance = async () => ((await (await p.api('/balance', { key: apiKey })).json()) as { remaining: number }).remaining;
      // Streamed speech does not wait for its saved copy; a whole WAV is served from it, so it cannot be answered.
      const mp3 = await p.api('/audio/speech', { method: 'POST', key: apiKey, json: { model: 'tts-1', input: 'Xin chào.' } });
      t.is(mp3.status, 200);
      await mp3.arrayBuffer();
      const paid = await balance();
      const wav = await p.api('/audio/speech', { method: 'POST', key: apiKey, json: { model: 'tts-1', input: 'Xin chào.', response_format: 'wav' } });
      t.is(wav.status, 503, 'a whole WAV that cannot be stored');
      t.is(wav.headers.get('retry-after'), '5');
      t.like(await wav.json(), { error: { type: 'api_error', code: null } });
      t.is(await balance(), paid, 'and refunded');
      const submitted = await p.api('/tts', { method: 'POST', key: apiKey, json: { text: 'Xin chào, âm thanh này chờ ổ đĩa có chỗ trống.' } });
      t.is(submitted.status, 201);
      const { jobId } = (await submitted.json()) as { jobId: string };
      const job = async () => (await (await p.api(`/tts/${jobId}`, { key: apiKey })).json()) as { status: string };
      await new Promise((resolve) => setTimeout(resolve, 2000));
      t.true(['queued', 'processing'].includes((await job()).status), 'still waiting while the disk is full');
      const charged = await balance();
      t.true(charged < paid);

      rmSync(filler);
      const done = await waitFor(async () => {
        const current = await job();
        return current.status === 'completed' || current.status === 'failed' ? current : null;
      }, { timeoutMs: 30_000, what: 'the job to end' });
      t.is(done!.status, 'completed');
      t.is(await balance(), charged, 'charged once, nothing refunded');
    } finally {
      await p.stop();
    }
  });

  test.serial('a WAL checkpoint the full disk refuses is tried again: the checkpoint thread carries on once space is freed', async (t) => {
    const dir = path.join(mountPoint, 'wal');
    const db = openEmbeddedDb(dir);
    db.exec('CREATE TABLE t (x BLOB)');
    const results: CheckpointResult[] = [];
    const failing: Array<Error | null> = [];
    let fellBack: Error | null = null;
    const checkpointer = checkpointInBackground(db, {
      intervalMs: 20, onCheckpoint: (r) => results.push(r), onFailing: (e) => failing.push(e), onFallback: (e) => { fellBack = e; },
    });
    try {
      t.true(await checkpointer.ready);
      // Room for 2 MB of WAL, not for the file to grow by as much again when they are copied into it.
      const filler = fill(dir, 3 << 20);
      db.transaction(() => {
        for (let i = 0; i < 32; i++) db.prepare('INSERT INTO t VALUES (?)').run(Buffer.alloc(64 << 10, i));
      })();
      await waitFor(() => failing.length > 0, { timeoutMs: 10_000, what: 'a failed checkpoint' });
      t.like(failing[0], { code: 'SQLITE_FULL' });
      rmSync(filler);
      await waitFor(() => failing.includes(null), { timeoutMs: 10_000, what: 'the checkpoints to succeed again' });
      const copied = await waitFor(() => results.find((r) => r.log > 0 && r.checkpointed === r.log), { timeoutMs: 10_000, what: 'the WAL copied into the file' });
      t.truthy(copied);
      t.is(fellBack, null, 'the thread never gave up');
      t.is(db.pragma('wal_autocheckpoint', { simple: true }), 0, 'and the serving connection still leaves checkpoints to it');
    } finally {
      await checkpointer.stop();
      db.close();
    }
  });
}
