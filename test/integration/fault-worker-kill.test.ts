import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startChildPlatform, type ChildPlatform } from '../helpers/child-platform.ts';
import { waitFor } from '../helpers/wait.ts';

const ADMIN = 'fault-test-admin-token-123';
const children: ChildPlatform[] = [];
let dataDir = '';

test.before(() => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'vieneu-fault-'));
});
test.after.always(async () => {
  await Promise.all(children.map((c) => c.kill()));
  rmSync(dataDir, { recursive: true, force: true });
});

const common = () => ({ DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN, URL_SIGNING_SECRET: 'fault-test-signing-secret', JOB_LEASE_SECONDS: '2', JOB_RETRY_BASE_MS: '100' });

test('SIGKILL of the inference worker mid-render: after restart the job completes, charged once, ledger reconciles', async (t) => {
  const api = await startChildPlatform({ ...common(), ROLES: 'api,pipelines' });
  children.push(api);
  const admin = (p: string, init: RequestInit = {}) => fetch(`${api.url}/admin/v1${p}`, { ...init, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' } });
  const acct = await (await admin('/bootstrap', { method: 'POST', body: JSON.stringify({ name: 'Fault' }) })).json();
  const text = Array.from({ length: 40 }, (_, i) => `Đây là câu thứ ${i + 1} của một văn bản dài dùng để kiểm tra khả năng chịu lỗi.`).join(' ');
  const submit = await fetch(`${api.url}/api/v1/tts`, {
    method: 'POST', headers: { authorization: `Bearer ${acct.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ text }),
  });
  t.is(submit.status, 201);
  const { jobId } = await submit.json();
  const poll = async () => (await fetch(`${api.url}/api/v1/tts/${jobId}`, { headers: { authorization: `Bearer ${acct.apiKey}` } })).json();

  const worker = await startChildPlatform({ ...common(), ROLES: 'inference' });
  children.push(worker);
  await waitFor(async () => (await poll()).status === 'processing', { timeoutMs: 20_000, intervalMs: 10, what: 'the job to start rendering' });
  await worker.kill('SIGKILL');
  t.not((await poll()).status, 'completed', 'the worker died before finishing');

  const restarted = await startChildPlatform({ ...common(), ROLES: 'inference' });
  children.push(restarted);
  const done = await waitFor(async () => {
    const job = await poll();
    return job.status === 'completed' || job.status === 'failed' ? job : null;
  }, { timeoutMs: 60_000, intervalMs: 100, what: 'the job to finish after restart' });
  t.is(done.status, 'completed');

  const reconcile = await waitFor(async () => {
    const r = await (await admin(`/grants/${acct.grantId}/reconcile`)).json();
    return r.ledgerCharged > 0 ? r : null;
  }, { what: 'the charge in the ledger' });
  const price = Math.ceil(Math.round([...text.normalize('NFC')].length * 3 * 1.3 * 1e6) / 1e6);
  t.is(reconcile.usedTokens, price, 'charged exactly once');
  t.is(reconcile.ledgerCharged, price);
  t.is(reconcile.ledgerRefunded, 0);
  t.true(reconcile.balanced);
});
