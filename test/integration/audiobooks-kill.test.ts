import test from 'ava';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startChildPlatform, type ChildPlatform } from '../helpers/child-platform.ts';
import { waitFor } from '../helpers/wait.ts';
import { chapterPrice } from '../helpers/audiobooks.ts';

/**
 * SIGKILL of the inference process in the middle of a chapter (real
 * processes on one embedded file, as `npm start` runs them). After a restart,
 * with two inference processes competing for the work, the chapter goes on
 * from its last finished part, and the money is exact: one charge, no refund.
 */
const ADMIN = 'audiobook-kill-admin-token-123';
const children: ChildPlatform[] = [];
let dataDir = '';

test.before(() => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'vieneu-abk-kill-'));
});
test.after.always(async () => {
  await Promise.all(children.map((c) => c.kill()));
  rmSync(dataDir, { recursive: true, force: true });
});

const common = () => ({
  DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN, URL_SIGNING_SECRET: 'audiobook-kill-signing-secret',
  PLUGINS: 'catalog,account,speech,jobs,audiobooks,admin', AUDIOBOOK_TICK_MS: '100', AUDIOBOOK_PART_CHARS: '250',
  AUDIOBOOK_LEASE_SECONDS: '2', AUDIOBOOK_RENDER_SLOTS: '1',
});

interface StoredPart { samples: number; renderedAt: string; attempt: number }

/** The chapter's recorded parts, read from the embedded file as the workers left them. */
function storedParts(bookId: string): Array<StoredPart | null> {
  const db = new Database(path.join(dataDir, 'platform.db'), { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare('SELECT doc FROM audiobooks_chapters WHERE book_id = ? AND idx = 1').get(bookId) as { doc: string };
    return (JSON.parse(row.doc) as { parts: Array<StoredPart | null> }).parts;
  } finally {
    db.close();
  }
}

test('SIGKILL of the inference process mid-chapter: after restart finished parts are reused and the chapter is charged exactly once', async (t) => {
  t.timeout(300_000);
  const api = await startChildPlatform({ ...common(), ROLES: 'api,pipelines' });
  children.push(api);
  const admin = (p: string, init: RequestInit = {}) => fetch(`${api.url}/admin/v1${p}`, { ...init, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' } });
  const acct = await (await admin('/bootstrap', { method: 'POST', body: JSON.stringify({ name: 'Kill' }) })).json();
  const call = async (method: string, p: string, json?: unknown) => {
    const res = await fetch(`${api.url}/api/v1${p}`, { method, headers: { authorization: `Bearer ${acct.apiKey}`, 'content-type': 'application/json' }, body: json ? JSON.stringify(json) : undefined });
    return { status: res.status, body: await res.json() };
  };
  const book = (await call('POST', '/audiobooks', { title: 'Sách dài', narratorVoice: 'vi-north-male-minh' })).body;
  const segments = Array.from({ length: 24 }, (_, i) => ({ text: `Đoạn thứ ${i + 1}: người lái đò kể chuyện về con sông quê, về những mùa nước nổi và những đêm trăng sáng.` }));
  t.is((await call('POST', `/audiobooks/${book.id}/chapters`, { title: 'Chương một', segments })).status, 201);
  t.is((await call('POST', `/audiobooks/${book.id}/start`)).status, 200);
  const progress = async () => (await call('GET', `/audiobooks/${book.id}`)).body.chapters?.[0].progress;

  const worker = await startChildPlatform({ ...common(), ROLES: 'inference' });
  children.push(worker);
  const before = await waitFor(async () => {
    const p = await progress();
    return p && p.partsDone >= 2 ? p : null;
  }, { timeoutMs: 60_000, intervalMs: 40, what: 'two finished parts' });
  await worker.kill('SIGKILL');
  const atKill = storedParts(book.id);
  const finished = atKill.filter((part): part is StoredPart => part !== null);
  t.true(finished.length >= 2 && finished.length < before.partsPlanned, `killed after ${finished.length} of ${before.partsPlanned} parts`);

  // Two inference processes now: the chapter is claimed by one of them, once its dead worker's lease lapses.
  for (let i = 0; i < 2; i++) children.push(await startChildPlatform({ ...common(), ROLES: 'inference' }));
  const done = await waitFor(async () => {
    const b = (await call('GET', `/audiobooks/${book.id}`)).body;
    return ['completed', 'partial', 'failed'].includes(b.status) ? b : null;
  }, { timeoutMs: 150_000, intervalMs: 200, what: 'the book to finish after the restart' }).catch(async (err) => {
    t.log(JSON.stringify((await call('GET', `/audiobooks/${book.id}`)).body.chapters[0]));
    t.log(JSON.stringify(storedParts(book.id)));
    for (const c of children) t.log(c.output().split('\n').filter((l) => /audiobook|error|warn/i.test(l)).slice(-15).join('\n'));
    throw err;
  });
  t.is(done.status, 'completed');
  t.like(done.chapters[0], { status: 'completed', audioFormat: 'mp3', error: null });

  const atEnd = storedParts(book.id);
  t.is(atEnd.length, before.partsPlanned);
  for (const [i, part] of atKill.entries()) {
    if (part) t.deepEqual(atEnd[i], part, `part ${i} finished before the kill was reused, not rendered again`);
  }
  t.true(atEnd.every((part) => part?.attempt === 1), 'the kill was not a failed attempt');

  const price = chapterPrice('Chương một', segments);
  const reconcile = await waitFor(async () => {
    const r = await (await admin(`/grants/${acct.grantId}/reconcile`)).json();
    return r.ledgerCharged > 0 ? r : null;
  }, { what: 'the charge in the ledger' });
  t.like(reconcile, { usedTokens: price, ledgerCharged: price, ledgerRefunded: 0, balanced: true });
  t.is(done.totals.tokensCharged, price);
});
