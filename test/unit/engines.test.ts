import test from 'ava';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import semver from 'semver';

/**
 * package.json's `engines.node` is a promise to whoever deploys this: every
 * installed dependency must run on the oldest Node it admits, and the Node
 * running the tests must be one it admits.
 */
const declared = JSON.parse(readFileSync('package.json', 'utf8')).engines.node as string;
const oldest = semver.minVersion(declared)!.version;

function installed(dir: string, out: Array<{ name: string; node: string }> = []): Array<{ name: string; node: string }> {
  for (const entry of readdirSync(dir)) {
    if (entry === '.bin') continue;
    const full = path.join(dir, entry);
    if (entry.startsWith('@')) {
      installed(full, out);
      continue;
    }
    const manifest = path.join(full, 'package.json');
    if (!existsSync(manifest)) continue;
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string; engines?: { node?: string } };
    if (pkg.engines?.node) out.push({ name: `${pkg.name}@${pkg.version}`, node: pkg.engines.node });
    if (existsSync(path.join(full, 'node_modules'))) installed(path.join(full, 'node_modules'), out);
  }
  return out;
}

test(`every installed dependency runs on the oldest Node package.json admits (${declared})`, (t) => {
  const refusing = installed('node_modules').filter((d) => !semver.satisfies(oldest, d.node, { includePrerelease: true }));
  t.deepEqual(refusing.map((d) => `${d.name} needs node ${d.node}`), []);
});

test('the Node running the tests is one package.json admits', (t) => {
  t.true(semver.satisfies(process.versions.node, declared), `node ${process.versions.node} vs ${declared}`);
});
