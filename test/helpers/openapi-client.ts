import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import type { ExecutionContext } from 'ava';

/**
 * openapi-typescript, the generator of the TypeScript client the tests
 * compile and call. It builds its output with TypeScript 5's compiler API,
 * which the project's TypeScript 7 (the native compiler) no longer has, and
 * npm refuses the two side by side in one tree (peer dependency). So it is
 * installed apart, from its own pinned lock file in test/tools/, into a
 * cache directory, once per machine (as test/deploy installs helm). Its
 * output is plain type declarations, compiled by the project's own tsc.
 *
 * If it cannot be installed, the test prints one line saying why and fails,
 * unless ALLOW_SKIP=1, where it passes after printing the line.
 */

const TOOL_SOURCE = path.resolve('test/tools/openapi-typescript');
const CACHE = process.env.OPENAPI_TOOLS_DIR ?? path.join(homedir(), '.cache', 'vieneu-tts', 'openapi-typescript');

function toolDir(): string {
  const lock = readFileSync(path.join(TOOL_SOURCE, 'package-lock.json'));
  return path.join(CACHE, createHash('sha256').update(lock).digest('hex').slice(0, 16));
}

let pending: { cli: string | null; reason: string } | null = null;

/** The generator's command line script, installing it the first time. */
export function openapiTypescript(): { cli: string | null; reason: string } {
  if (pending) return pending;
  const dir = toolDir();
  const cli = path.join(dir, 'node_modules', 'openapi-typescript', 'bin', 'cli.js');
  if (!existsSync(cli)) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    for (const file of ['package.json', 'package-lock.json']) cpSync(path.join(TOOL_SOURCE, file), path.join(dir, file));
    const install = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: dir, encoding: 'utf8', timeout: 5 * 60_000 });
    if (install.status !== 0 || !existsSync(cli)) {
      const last = `${install.stdout ?? ''}${install.stderr ?? ''}${install.error?.message ?? ''}`.trim().split('\n').pop();
      pending = { cli: null, reason: `npm ci in ${dir} failed: ${last}` };
      return pending;
    }
  }
  pending = { cli, reason: '' };
  return pending;
}

/** The generator for a test, or null after printing one line (the test then fails, or passes with ALLOW_SKIP=1). */
export function requireGenerator(t: ExecutionContext): string | null {
  const { cli, reason } = openapiTypescript();
  if (cli) return cli;
  const line = `generated client: openapi-typescript could not be installed: ${reason}`;
  console.log(line);
  if (process.env.ALLOW_SKIP === '1') {
    t.log(`${line} (ALLOW_SKIP=1: not failing)`);
    t.pass();
  } else {
    t.fail(`${line}. Set ALLOW_SKIP=1 to let this pass.`);
  }
  return null;
}
