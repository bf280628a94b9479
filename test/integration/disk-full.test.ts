import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * The embedded defaults on a disk that fills up: every write fails with
 * SQLITE_FULL (and ENOSPC for the audio directory). Requests that need a
 * write are refused with 503 SERVICE_UNAVAILABLE and Retry-After, nothing
 * charged, instead of a 500; reads go on; the outcome events of the refused
 * requests wait in the bus's publish retry and reach the usage analytics
 * once space is freed. The disk is a small tmpfs mounted for the test, which
 * needs root (CI runs as root); elsewhere the test says why it skipped.
 */
const mountPoint = mkdtempSync(path.join(tmpdir(), 'vieneu-disk-full-'));
let mountProblem: string | null = null;
try {
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=32m', 'tmpfs', mountPoint], { stdio: 'pipe' });
} catch (err) {
  mountProblem = String((err as { stderr?: Buffer }).stderr ?? (err as Error).message).trim().split('\n')[0] || 'mount failed';
}

const unmount = () => {
  if (mountProblem === null) execFileSync('umount', ['-l', mountPoint]);
  rmSync(mountPoint, { recursive: true, force: true });
};

if (mountProblem !== null) {
  console.log(`disk-full test: cannot mount a tmpfs to fill (${mountProblem}); skipping`);
  test.skip('a full disk refuses writes with 503 and keeps the outcome events', () => {});
  unmount();
} else {
  test.after.always(unmount);

  test('a full disk refuses writes with 503 and Retry-After, charges nothing, and keeps the refused requests\' outcome events', async (t) => {
    const p = await startTestPlatform({ DATA_DIR: path.join(mountPoint, 'data') });
    const filler = path.join(mountPoint, 'filler');
    try {
      const { apiKey } = await p.bootstrap({ grant: { totalTokens: 100_000 } });
      const balance = async () => ((await (await p.api('/balance', { key: apiKey })).json()) as { remaining: number }).remaining;
      const before = await balance();

      const free = statfsSync(mountPoint);
      writeFileSync(filler, Buffer.alloc(free.bavail * free.bsize));

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
}
