import test from 'ava';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * npm 11 runs a dependency's install scripts only with a notice when
 * package.json's `allowScripts` does not name it, and blocks them by default
 * from the next major on: every package of the lock file that has one is
 * reviewed there, approved or denied.
 */
const ROOT = path.resolve('.');
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { allowScripts: Record<string, boolean> };
const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { hasInstallScript?: boolean }>;
};

const withInstallScripts = Object.entries(lock.packages)
  .filter(([, entry]) => entry.hasInstallScript)
  .map(([where]) => where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length));

test('every dependency with an install script is reviewed in allowScripts (approved or denied), and nothing else is named', (t) => {
  t.true(withInstallScripts.length > 0, 'the lock file lists install scripts');
  const unreviewed = [...new Set(withInstallScripts)].filter((name) => typeof pkg.allowScripts[name] !== 'boolean');
  t.deepEqual(unreviewed, [], 'run `npm install-scripts ls`, review each, then approve or deny it');
  const stale = Object.keys(pkg.allowScripts).filter((name) => !withInstallScripts.includes(name));
  t.deepEqual(stale, [], 'entries for packages without install scripts (`npm install-scripts prune`)');
});

test('what the platform runs on is approved: the SQLite binding is compiled and the bundled ffmpeg and ffprobe made executable', (t) => {
  for (const name of ['better-sqlite3', '@ffmpeg-installer/linux-x64', '@ffprobe-installer/linux-x64']) t.true(pkg.allowScripts[name], name);
});

test('onnxruntime-node\'s download of the CUDA provider is denied (the GPU image runs that script itself), as are telemetry and SSH\'s optional native crypto', (t) => {
  // .npmrc's onnxruntime-node-install=skip does the same for npm releases that predate allowScripts.
  t.regex(readFileSync(path.join(ROOT, '.npmrc'), 'utf8'), /onnxruntime-node-install=skip/);
  for (const name of ['onnxruntime-node', '@scarf/scarf', 'ssh2', 'cpu-features']) t.false(pkg.allowScripts[name], name);
});
