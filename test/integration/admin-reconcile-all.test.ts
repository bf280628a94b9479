import test from 'ava';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openEmbeddedDb } from '../../core/adapters/embedded-db.ts';
import { createSqliteDocuments } from '../../core/adapters/documents/sqlite.ts';
import { createSqliteAnalytics } from '../../core/adapters/analytics/sqlite.ts';
import type { Documents, Grant, LedgerEntry } from '../../core/ports/documents.ts';

/**
 * `npm run admin -- reconcile-all` (issue 15): the real CLI as a child
 * process on an embedded data directory the test filled. It prints the
 * report as JSON and exits 2 when anything drifted, 0 when all agrees.
 */
const CLI = path.resolve('plugins/admin/cli.ts');

function runCli(dataDir: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // The embedded stores of dataDir, whatever this machine's environment points at.
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
    for (const name of ['MONGODB_URL', 'CLICKHOUSE_URL', 'KAFKA_BROKERS', 'REDIS_URL', 'CONFIG_FILE']) delete env[name];
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

async function withDocuments(dataDir: string, fill: (documents: Documents, db: ReturnType<typeof openEmbeddedDb>) => Promise<void>): Promise<void> {
  const db = openEmbeddedDb(dataDir);
  try {
    await fill(createSqliteDocuments(db), db);
  } finally {
    db.close();
  }
}

async function chargedGrant(documents: Documents, tokens: number, toLedger: boolean): Promise<{ grant: Grant; entry: LedgerEntry }> {
  const grant = await documents.grants.create({
    id: `grt_${randomUUID()}`, accountId: `acc_${randomUUID()}`, plan: 'pro', totalTokens: 10_000, usedTokens: 0, dailyCap: null,
    weeklyCap: null, dayKey: null, dayUsed: 0, weekKey: null, weekUsed: 0, expiresAt: null, isGift: false, engines: ['v4'],
    status: 'active', createdAt: new Date().toISOString(),
  });
  const id = `chg_${randomUUID()}`;
  const at = new Date(Date.now() - 3 * 3_600_000).toISOString();
  const entry: LedgerEntry = {
    id, kind: 'charge', grantId: grant.id, accountId: grant.accountId, keyId: null, chargeId: id, requestId: `req_${id}`, route: 'tts',
    tokens, dayKey: at.slice(0, 10), weekKey: 'w', at,
  };
  await documents.grants.charge({ grantId: grant.id, tokens, dayKey: entry.dayKey!, weekKey: 'w', now: at, entry });
  if (toLedger) await documents.ledger.append(entry);
  return { grant, entry };
}

test('reconcile-all exits 0 with a clean report when every grant and account adds up', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vieneu-reconcile-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  await withDocuments(dataDir, async (documents, db) => {
    const { entry } = await chargedGrant(documents, 195, true);
    await createSqliteAnalytics(db).recordOutcomes([{
      id: `out_${randomUUID()}`, at: entry.at, requestId: entry.requestId!, accountId: entry.accountId, keyId: null, grantId: entry.grantId,
      route: 'tts', status: 200, result: 'ok', tokensCharged: 195, tokensRefunded: 0, characters: 50, audioSeconds: 1, genMs: 5,
      voice: null, voiceName: null, engine: 'v4', errorCode: null, cacheHit: false, queued: false, jobId: null,
    }]);
  });
  const { code, stdout, stderr } = await runCli(dataDir, ['reconcile-all', '--settle-seconds', '0']);
  t.is(code, 0, stderr);
  const report = JSON.parse(stdout);
  t.like(report, { grantsChecked: 1, grantsDrifted: 0, driftTokens: 0, usage: { accountsChecked: 1, accountsDrifted: 0, driftTokens: 0 } });
});

test('reconcile-all names the drifted grant and account and exits 2', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vieneu-reconcile-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  let lost = '';
  await withDocuments(dataDir, async (documents) => {
    await chargedGrant(documents, 195, true);
    lost = (await chargedGrant(documents, 468, false)).grant.id; // charged, never written to the ledger
  });
  const { code, stdout, stderr } = await runCli(dataDir, ['reconcile-all', '--settle-seconds', '0', '--skip-usage']);
  t.is(code, 2, stderr);
  const report = JSON.parse(stdout);
  t.like(report, { grantsChecked: 2, grantsDrifted: 1, driftTokens: 468, usage: null });
  t.like(report.drifts[0], { grantId: lost, usedTokens: 468, ledgerCharged: 0, driftTokens: 468 });
});

test('reconcile-all refuses a negative settle time with a message, exit 1', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vieneu-reconcile-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const { code, stderr } = await runCli(dataDir, ['reconcile-all', '--settle-seconds=-5']);
  t.is(code, 1);
  t.regex(stderr, /--settle-seconds must be a number of at least 0/);
});
