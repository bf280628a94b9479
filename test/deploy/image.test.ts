import test from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { requireTools, run } from './tools.ts';

/**
 * The image (helm/vieneu-tts/Dockerfile). CI builds and runs it for real
 * (test/deploy/image-build.sh, with podman, before `npm test`); these checks
 * need no container engine and run everywhere: hadolint;
 * every COPY source exists and survives .dockerignore; stages refer to
 * earlier stages; both runtime targets run `node dist/core/main.js` under
 * tini as user 10001 (the chart's runAsUser) with production dependencies
 * only; the GPU target installs onnxruntime's CUDA provider the way its
 * install script reads it. Last, the image's layout is rebuilt on disk
 * (package.json, node_modules, dist/ from tsconfig.build.json) and its CMD is
 * run: it serves, and exits 0 on SIGTERM.
 */
const ROOT = path.resolve('.');
const DOCKERFILE = path.join(ROOT, 'helm/vieneu-tts/Dockerfile');

interface Instruction {
  op: string;
  args: string;
  stage: string;
}

function instructions(): Instruction[] {
  const text = readFileSync(DOCKERFILE, 'utf8').replace(/\\\n/g, ' ');
  const out: Instruction[] = [];
  let stage = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const [, op, args] = /^(\w+)\s+(.*)$/.exec(line) ?? [];
    if (!op) continue;
    if (op.toUpperCase() === 'FROM') stage = /\sAS\s+(\S+)/i.exec(args!)?.[1] ?? '';
    out.push({ op: op.toUpperCase(), args: args!, stage });
  }
  return out;
}

const stages = () => [...new Set(instructions().filter((i) => i.op === 'FROM').map((i) => i.stage))];
const of = (stage: string, op: string) => instructions().filter((i) => i.stage === stage && i.op === op);

/** Docker's .dockerignore: patterns in order, the last that matches a path decides; `!` re-includes. */
function dockerIgnored(file: string): boolean {
  const rules = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  let ignored = false;
  for (const rule of rules) {
    const negated = rule.startsWith('!');
    const pattern = negated ? rule.slice(1) : rule;
    const regex = new RegExp(`^${pattern.split('**').map((part) => part.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]')).join('.*')}(/.*)?$`);
    if (regex.test(file)) ignored = !negated;
  }
  return ignored;
}

function trackedFiles(): string[] {
  return spawnSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
}

test('hadolint finds nothing in the Dockerfile', async (t) => {
  const tools = await requireTools(t);
  if (!tools) return;
  const result = run(tools.hadolint, ['--no-color', DOCKERFILE]);
  t.is(result.status, 0, result.stdout + result.stderr);
});

test('every COPY source exists in the repository and is in the build context; nothing else is sent', (t) => {
  const files = trackedFiles();
  const copies = instructions().filter((i) => i.op === 'COPY' && !i.args.includes('--from='));
  t.true(copies.length >= 8);
  for (const copy of copies) {
    const sources = copy.args.split(/\s+/).filter((a) => !a.startsWith('--')).slice(0, -1);
    for (const source of sources) {
      const inside = files.filter((f) => f === source || f.startsWith(`${source}/`));
      t.true(inside.length > 0, `COPY ${source}: nothing tracked there`);
      t.deepEqual(inside.filter(dockerIgnored), [], `COPY ${source}: .dockerignore leaves these out`);
    }
  }
  for (const never of ['test/deploy/helm.test.ts', 'README.md', '.ci/run', 'helm/vieneu-tts/values.yaml']) t.true(dockerIgnored(never), `${never} stays out of the context`);
});

test('stages: COPY --from names an earlier stage; the default target is the CPU runtime; the GPU target exists', (t) => {
  const seen: string[] = [];
  for (const i of instructions()) {
    if (i.op === 'FROM') {
      const base = i.args.split(/\s+/)[0]!;
      if (!base.includes('$') && !base.includes(':')) t.true(seen.includes(base), `FROM ${base} is an earlier stage or a tagged image`);
      seen.push(i.stage);
    }
    const from = /--from=(\S+)/.exec(i.args)?.[1];
    if (from) t.true(seen.includes(from), `COPY --from=${from} in ${i.stage} names an earlier stage`);
  }
  const names = stages();
  t.is(names[names.length - 1], 'runtime');
  t.true(names.includes('runtime-gpu'));
});

test('both runtime targets: tini as PID 1, node dist/core/main.js, user 10001 (the chart\'s runAsUser), espeak-ng, production node_modules only', (t) => {
  const chartUser = /runAsUser:\s*(\d+)/.exec(readFileSync(path.join(ROOT, 'helm/vieneu-tts/values.yaml'), 'utf8'))![1];
  for (const stage of ['runtime', 'runtime-gpu']) {
    t.deepEqual(of(stage, 'ENTRYPOINT').map((i) => JSON.parse(i.args)), [['/usr/bin/tini', '--']], stage);
    t.deepEqual(of(stage, 'CMD').map((i) => JSON.parse(i.args)), [['node', 'dist/core/main.js']], stage);
    t.deepEqual(of(stage, 'USER').map((i) => i.args), [`${chartUser}:${chartUser}`], stage);
    const installs = of(stage, 'RUN').map((i) => i.args).join(' ');
    t.regex(installs, /apt-get install[^&]*\bespeak-ng\b/, stage);
    t.regex(installs, /apt-get install[^&]*\btini\b/, stage);
    t.notRegex(installs, /\bnpm\b/, `${stage} runs no npm`);
    const modules = of(stage, 'COPY').find((i) => i.args.includes('node_modules'))!;
    const from = /--from=(\S+)/.exec(modules.args)![1]!;
    const depsStage = from === 'deps-gpu' ? 'deps' : from;
    t.true(of(depsStage, 'RUN').some((i) => /npm ci --omit=dev/.test(i.args)), `${stage} takes node_modules from a stage that left dev dependencies out`);
    t.true(of(stage, 'COPY').some((i) => /--from=build \/src\/dist \.\/dist/.test(i.args)), `${stage} copies the compiled dist/`);
    t.true(of(stage, 'COPY').some((i) => /^package\.json \.\/$/.test(i.args)), `${stage} has package.json ("type": "module" for dist/)`);
  }
  // The compiled entry lands where CMD looks: tsconfig.build.json maps core/main.ts to dist/core/main.js.
  const build = JSON.parse(readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8'));
  t.like(build.compilerOptions, { outDir: 'dist', rootDir: '.' });
  t.true(build.include.includes('core') && existsSync(path.join(ROOT, 'core/main.ts')));
  t.true(of('build', 'RUN').some((i) => i.args === 'npm run build'));
  // `npm run build` compiles with tsconfig.build.json, then builds the console's front end into dist/console.
  t.is(JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.build, 'tsc -p tsconfig.build.json && npm run build:console');
});

test('the GPU target installs onnxruntime\'s CUDA 12 provider with the package\'s own script, where the loader looks for it', (t) => {
  const run = of('deps-gpu', 'RUN').map((i) => i.args).join(' ');
  t.regex(run, /ONNXRUNTIME_NODE_INSTALL=cuda12 node node_modules\/onnxruntime-node\/script\/install\.js/);
  const ortDir = path.join(ROOT, 'node_modules/onnxruntime-node');
  const script = readFileSync(path.join(ortDir, 'script/install.js'), 'utf8');
  t.regex(script, /'bin\/napi-v6'/, 'the script writes into bin/napi-v6/<platform>/<arch>');
  // The variable wins over .npmrc's onnxruntime-node-install=skip (npm_config_onnxruntime_node_install).
  t.regex(readFileSync(path.join(ortDir, 'script/install-utils.js'), 'utf8'), /process\.env\.ONNXRUNTIME_NODE_INSTALL \|\| process\.env\.npm_config_onnxruntime_node_install/);
  t.true((require_(path.join(ortDir, 'script/install-metadata.js')).requirements['linux/x64'] as string[]).includes('cuda12'));
  t.regex(run, /test -f node_modules\/onnxruntime-node\/bin\/napi-v6\/linux\/x64\/libonnxruntime_providers_cuda\.so/);
  t.regex(readFileSync(path.join(ROOT, 'inference/engines/onnx-session.ts'), 'utf8'), /libonnxruntime_providers_cuda\.so/, 'the loader checks the same file');
  t.regex(readFileSync(path.join(ROOT, '.npmrc'), 'utf8'), /onnxruntime-node-install=skip/, 'the CPU image keeps skipping it');
  t.regex(instructions().find((i) => i.op === 'FROM' && i.stage === 'runtime-gpu')!.args, /CUDA_IMAGE/);
  t.regex(readFileSync(DOCKERFILE, 'utf8'), /ARG CUDA_IMAGE=nvidia\/cuda:12\.[0-9.]+-cudnn-runtime-/);
});

function require_(file: string): any {
  const code = readFileSync(file, 'utf8');
  const module = { exports: {} as any };
  new Function('module', 'exports', 'require', code)(module, module.exports, (id: string) => (id.endsWith('install-metadata-versions.js') ? { nuget: [] } : {}));
  return module.exports;
}

test('the image layout runs: dist/ compiled by tsconfig.build.json and the console built by Vite, `node dist/core/main.js` serves both and exits 0 on SIGTERM', async (t) => {
  t.timeout(5 * 60_000);
  const app = mkdtempSync(path.join(tmpdir(), 'vieneu-image-'));
  t.teardown(() => rmSync(app, { recursive: true, force: true }));
  copyFileSync(path.join(ROOT, 'package.json'), path.join(app, 'package.json'));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(app, 'node_modules'));
  const tsc = run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(ROOT, 'tsconfig.build.json'), '--outDir', path.join(app, 'dist'), '--sourceMap', 'false']);
  t.is(tsc.status, 0, tsc.stdout + tsc.stderr);
  t.true(existsSync(path.join(app, 'dist/core/main.js')));
  // `npm run build`'s second step: the console's front end into dist/console, where the compiled plugin looks.
  const vite = run(process.execPath, [path.join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--config', path.join(ROOT, 'plugins/console/vite.config.ts'), '--outDir', path.join(app, 'dist/console'), '--emptyOutDir', '--logLevel', 'warn']);
  t.is(vite.status, 0, vite.stdout + vite.stderr);

  // Worker threads and the process launcher load modules of their own: in the compiled build those are .js files next to the caller.
  const siblings: Array<[string, string]> = [
    ['core/speechkit/text/speech-text-request.js', 'PREPARE_WORKER'], ['inference/engines/spawn-thread.js', 'SPAWN_WORKER'], ['core/speechkit/launcher.js', 'LAUNCHER_PROCESS'],
  ];
  for (const [file, name] of siblings) {
    const url = ((await import(pathToFileURL(path.join(app, 'dist', file)).href)) as Record<string, URL>)[name]!;
    t.true(url.pathname.endsWith('.js') && existsSync(fileURLToPath(url)), `${name} of dist/${file} is ${url.pathname}`);
  }

  const child = spawn(process.execPath, ['dist/core/main.js'], {
    cwd: app,
    env: { PATH: process.env.PATH, PORT: '0', OPS_PORT: '0', HOST: '127.0.0.1', DATA_DIR: path.join(app, 'data'), LOG_LEVEL: 'warn', SHUTDOWN_TIMEOUT_SECONDS: '10' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c) => (output += c));
  child.stderr.on('data', (c) => (output += c));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line in 60 s: ${output}`)), 60_000);
    child.stdout.on('data', () => {
      const match = /listening on (http:\/\/\S+)\/api\/v1/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    void exited.then((code) => reject(new Error(`exited ${code}: ${output}`)));
  });
  const health = await fetch(`${url}/healthz`);
  t.is(health.status, 200);
  const voices = await fetch(`${url}/api/v1/voices`);
  t.is(voices.status, 200, 'the compiled plugins load and serve');
  const consolePage = await fetch(`${url}/console/`);
  t.is(consolePage.status, 200, 'the console is served from dist/console');
  const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(await consolePage.text())?.[1];
  t.truthy(script);
  t.is((await fetch(`${url}${script}`)).status, 200);
  child.kill('SIGTERM');
  t.is(await exited, 0, output);
  t.regex(output, /SIGTERM received: draining/);
});
