import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openMemoryDb } from '../../core/adapters/embedded-db.ts';
import { createSqliteJobs } from '../../core/adapters/documents/sqlite-jobs.ts';
import { createDirectoryBlobs } from '../../core/adapters/blobs/directory.ts';
import { createLogger } from '../../core/logger.ts';
import { SavedCopy, type SavedCopyInput } from '../../plugins/speech/saved-copy.ts';

/**
 * The saved copy of a long `/audio/speech` response stays `processing` for as
 * long as the response streams, which may be hours: its process renews its
 * keep-alive, so the sweep that fails copies of crashed processes never takes
 * a live one (a probe saw a complete 22.6 MB response's copy failed after an
 * hour, and its file left with no job).
 */
function setup(t: import('ava').ExecutionContext) {
  const db = openMemoryDb();
  const dir = mkdtempSync(path.join(tmpdir(), 'saved-copy-'));
  t.teardown(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { jobs: createSqliteJobs(db), blobs: createDirectoryBlobs(dir), logger: createLogger('silent') };
}

const input: SavedCopyInput = {
  accountId: 'acct_1', keyId: 'key_1', text: 'Xin chào', voiceId: 'vi-north-female-mai', voiceName: 'Mai', engine: 'v4', speed: 1,
  aiRefine: false, characters: 8, format: 'mp3', sampleRate: 24000,
  charge: { id: 'chg_1', grantId: 'g_1', accountId: 'acct_1', keyId: 'key_1', tokens: 195, engine: 'v4', route: 'POST /audio/speech', requestId: 'r_1', dayKey: '2026-11-29', weekKey: '2026-W48', at: new Date().toISOString() },
};

test('a live copy renews its keep-alive, so the sweep of crashed copies passes it by however long it streams; it completes with its file', async (t) => {
  const deps = { ...setup(t), keepAliveMs: 400 };
  const copy = await SavedCopy.start(deps, input);
  await copy.write(Buffer.from('ID3 audio bytes'));
  const first = (await deps.jobs.get(copy.jobId))!;
  t.is(first.status, 'processing');
  await new Promise((r) => setTimeout(r, 1000));
  // Well past the first keep-alive: a sweep now would have failed it, had it not been renewed.
  t.true(Date.parse((await deps.jobs.get(copy.jobId))!.leaseUntil!) > Date.parse(first.leaseUntil!), 'renewed');
  t.is(await deps.jobs.failStaleCopies(new Date().toISOString(), new Date(Date.now() - 3600_000).toISOString()), 0);
  await copy.complete(1.5, 20);
  const done = (await deps.jobs.get(copy.jobId))!;
  t.like(done, { status: 'completed', durationSeconds: 1.5 });
  t.truthy(await deps.blobs.open(done.audioKey!));
});

test('a copy whose keep-alive lapsed (its process stalled past it) is failed by the sweep; completing it then leaves no file behind', async (t) => {
  const deps = { ...setup(t), keepAliveMs: 60_000 };
  const copy = await SavedCopy.start(deps, input);
  await copy.write(Buffer.from('ID3 audio bytes'));
  t.is(await deps.jobs.failStaleCopies(new Date(Date.now() + 61_000).toISOString(), new Date(Date.now() - 3600_000).toISOString()), 1);
  await copy.complete(1.5, 20);
  t.is((await deps.jobs.get(copy.jobId))?.status, 'failed');
  t.is(await deps.blobs.open(`speech/${copy.jobId}.mp3`), null, 'no orphaned audio');
});

test('a copy left open by a fault (never completed nor failed) is renewed no longer than any response can last, so the sweep fails it then', async (t) => {
  const deps = { ...setup(t), keepAliveMs: 200, maxLifetimeMs: 300 };
  const copy = await SavedCopy.start(deps, input);
  await new Promise((r) => setTimeout(r, 900));
  const lease = (await deps.jobs.get(copy.jobId))!.leaseUntil!;
  await new Promise((r) => setTimeout(r, 500));
  t.is((await deps.jobs.get(copy.jobId))!.leaseUntil, lease, 'no longer renewed');
  t.is(await deps.jobs.failStaleCopies(new Date().toISOString(), new Date(Date.now() - 3600_000).toISOString()), 1);
});
