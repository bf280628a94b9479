import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Runs `core/main.ts` (what `npm start` runs) to its exit; resolves with the exit code and what it wrote to stderr. */
function runToExit(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['--import=tsx', 'core/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, HOST: '127.0.0.1', PORT: '0', OPS_PORT: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) => child.once('exit', (code) => {
    clearTimeout(timer);
    resolve({ code, stderr });
  }));
}

test('a DATA_DIR that cannot hold the embedded database stops start-up with exit 78, naming the setting and the reason', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'vieneu-start-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // A regular file where the directory should be: refused even for root, unlike a read-only mode.
  const file = path.join(dir, 'not-a-directory');
  writeFileSync(file, '');
  const { code, stderr } = await runToExit({ DATA_DIR: path.join(file, 'data') });
  t.is(code, 78, stderr);
  t.regex(stderr, /the data directory \S+not-a-directory\/data \(DATA_DIR\) cannot hold the embedded database: ENOTDIR/);
});
