import test, { type ExecutionContext } from 'ava';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
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

/** A scratch data directory and a loopback port another process holds, both gone after the test. */
async function takenPort(t: ExecutionContext): Promise<{ dir: string; port: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'vieneu-start-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const taken = net.createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.teardown(() => taken.close());
  return { dir, port: String((taken.address() as AddressInfo).port) };
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

test('a port already in use stops start-up with exit 78 naming the setting (PORT, OPS_PORT), not a stack trace', async (t) => {
  const { dir, port } = await takenPort(t);
  for (const setting of ['PORT', 'OPS_PORT']) {
    const { code, stderr } = await runToExit({ DATA_DIR: path.join(dir, setting), [setting]: port, ADMIN_TOKEN: 'start-up-test-admin-token' });
    t.is(code, 78, stderr);
    t.regex(stderr, new RegExp(`127\\.0\\.0\\.1:${port} is already in use by another process: choose another ${setting} \\(or HOST\\)\\.`), setting);
    t.notRegex(stderr, /\n\s+at /, 'no stack trace');
  }
});

test('an INFERENCE_PORT already in use stops start-up with exit 78 naming INFERENCE_PORT, not a stack trace', async (t) => {
  const { dir, port } = await takenPort(t);
  const { code, stderr } = await runToExit({ DATA_DIR: dir, INFERENCE_PORT: port, ADMIN_TOKEN: 'start-up-test-admin-token' });
  t.is(code, 78, stderr);
  t.regex(stderr, new RegExp(`127\\.0\\.0\\.1:${port} is already in use by another process: choose another INFERENCE_PORT \\(or HOST\\)\\.`));
  t.notRegex(stderr, /\n\s+at /, 'no stack trace');
});

test('a HOST that names no address stops start-up with exit 78 naming HOST, not a stack trace', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'vieneu-start-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // `.invalid` never resolves (RFC 2606); without a name server the lookup fails with EAI_AGAIN instead.
  const { code, stderr } = await runToExit({ DATA_DIR: dir, HOST: 'garbage.invalid', ADMIN_TOKEN: 'start-up-test-admin-token' });
  t.is(code, 78, stderr);
  t.regex(stderr, /HOST "garbage\.invalid" (is not a name this machine can resolve \(ENOTFOUND\)|could not be resolved \(the name server did not answer\) \(EAI_AGAIN\)): set HOST to an address or name of this machine/);
  t.notRegex(stderr, /\n\s+at /, 'no stack trace');
});

test('README Quick start "it needs espeak-ng": without it the process still starts, and says so once in its log at start', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'vieneu-start-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // A PATH that has node but no espeak-ng.
  const bin = path.join(dir, 'bin');
  mkdirSync(bin);
  symlinkSync(process.execPath, path.join(bin, 'node'));
  const child = spawn(process.execPath, ['--import=tsx', 'core/main.ts'], {
    cwd: ROOT,
    env: { PATH: bin, HOME: process.env.HOME, HOST: '127.0.0.1', PORT: '0', OPS_PORT: '0', LOG_LEVEL: 'warn', DATA_DIR: path.join(dir, 'data') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => { child.kill('SIGKILL'); });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { out += d.toString(); });
  const said = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), 45_000);
    const look = () => {
      if (/the speech engine is not usable/.test(out)) {
        clearTimeout(timer);
        resolve(true);
      }
    };
    child.stdout!.on('data', look);
    child.stderr!.on('data', look);
  });
  t.true(said, out.slice(-2000));
  t.regex(out, /listening on/, 'it still serves (the other routes, and readiness says what is wrong)');
  t.regex(out, /apt-get install espeak-ng/);
});

test('MCP_ALLOWED_ORIGINS with an entry that is no origin stops start-up with exit 78 naming the entry', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'vieneu-start-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { code, stderr } = await runToExit({ DATA_DIR: dir, MCP_ALLOWED_ORIGINS: 'https://ok.example.com, not a url' });
  t.is(code, 78, stderr);
  t.regex(stderr, /"MCP_ALLOWED_ORIGINS" entry "not a url" is not an origin/);
});
