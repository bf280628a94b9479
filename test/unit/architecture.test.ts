import test from 'ava';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * The layering rules of DESIGN.md run in `npm test` (npm run lint:deps).
 * Here they are shown to bite: a small tree that breaks each rule once must
 * produce exactly those violations.
 */
const ROOT = process.cwd();
const CRUISER = path.join(ROOT, 'node_modules', '.bin', 'depcruise');

function cruise(cwd: string, roots: string[]): { violations: Array<{ rule: { name: string }; from: string; to: string }> } {
  const run = spawnSync(CRUISER, [...roots, '--config', path.join(ROOT, '.dependency-cruiser.cjs'), '--output-type', 'json'], { cwd, encoding: 'utf8' });
  return JSON.parse(run.stdout).summary;
}

test('the project itself has no violations', (t) => {
  t.deepEqual(cruise(ROOT, ['core', 'plugins', 'pipelines', 'inference', 'config']).violations, []);
});

test('each layering rule fails a tree that breaks it', (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'arch-'));
  try {
    cpSync(path.join(ROOT, 'tsconfig.json'), path.join(dir, 'tsconfig.json'));
    const file = (name: string, body: string) => {
      mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      writeFileSync(path.join(dir, name), body);
    };
    file('core/upward.ts', "import { x } from '../plugins/a/index.ts';\nexport const y = x;\n");
    file('core/p.ts', "import { q } from './q.ts';\nexport const p = () => q;\n");
    file('core/q.ts', "import { p } from './p.ts';\nexport const q = () => p;\n");
    file('config/settings.ts', "import { y } from '../core/upward.ts';\nexport const s = y;\n");
    file('plugins/a/index.ts', 'export const x = 1;\n');
    file('plugins/b/index.ts', "import { x } from '../a/index.ts';\nexport const z = x;\n");
    file('pipelines/one/index.ts', "import { w } from '../two/index.ts';\nexport const v = w;\n");
    file('pipelines/two/index.ts', 'export const w = 2;\n');
    file('inference/index.ts', "import { x } from '../plugins/a/index.ts';\nexport const i = x;\n");
    const seen = cruise(dir, ['core', 'plugins', 'pipelines', 'inference', 'config']).violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort();
    t.deepEqual(seen, [
      'config-imports-nothing: config/settings.ts -> core/upward.ts',
      'core-imports-no-feature: core/upward.ts -> plugins/a/index.ts',
      'features-do-not-cross-roots: inference/index.ts -> plugins/a/index.ts',
      'no-circular: core/p.ts -> core/q.ts',
      'pipelines-are-isolated: pipelines/one/index.ts -> pipelines/two/index.ts',
      'plugins-are-isolated: plugins/b/index.ts -> plugins/a/index.ts',
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
