import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import type { ExecutionContext } from 'ava';

/**
 * The tools of the deployment checks (helm, kubeconform, promtool, hadolint
 * and offline Kubernetes schemas), installed by test/deploy/install-tools.sh
 * into a cache directory. CI runs that script before `npm test`; when a
 * tool is still missing here, the script is run once from the test (it
 * compiles from the Go module proxy: minutes the first time).
 *
 * If the tools cannot be had, a test prints one line saying so and fails,
 * unless ALLOW_SKIP=1, where it passes after printing the line.
 */
export const TOOLS_DIR = process.env.DEPLOY_TOOLS_DIR ?? path.join(homedir(), '.cache', 'vieneu-tts', 'deploy-tools');
export const INSTALL_SCRIPT = path.resolve('test/deploy/install-tools.sh');
/** Kubernetes version manifests are validated against (schemas from the kubernetes-validate wheel). */
export const KUBE_VERSION = '1.33.0';

export interface DeployTools {
  helm: string;
  kubeconform: string;
  promtool: string;
  hadolint: string;
  /** kubeconform -schema-location template for the cached schemas */
  schemaLocation: string;
}

function located(): DeployTools | null {
  const bin = path.join(TOOLS_DIR, 'bin');
  const tools = {
    helm: path.join(bin, 'helm'),
    kubeconform: path.join(bin, 'kubeconform'),
    promtool: path.join(bin, 'promtool'),
    hadolint: path.join(bin, 'hadolint'),
    schemaLocation: path.join(TOOLS_DIR, 'schemas', '{{ .NormalizedKubernetesVersion }}-local{{ .StrictSuffix }}', '{{ .ResourceKind }}{{ .KindSuffix }}.json'),
  };
  const schemas = path.join(TOOLS_DIR, 'schemas', `v${KUBE_VERSION}-local-strict`, 'deployment-apps-v1.json');
  const present = [tools.helm, tools.kubeconform, tools.promtool, tools.hadolint, schemas].every((f) => existsSync(f));
  return present ? tools : null;
}

let pending: Promise<{ tools: DeployTools | null; reason: string }> | null = null;
let told = false;

/** Finds the tools, running the install script once per test process when some are missing. */
export function deployTools(): Promise<{ tools: DeployTools | null; reason: string }> {
  pending ??= (async () => {
    const found = located();
    if (found) return { tools: found, reason: '' };
    if (process.env.DEPLOY_TOOLS_NO_INSTALL === '1') return { tools: null, reason: `not in ${TOOLS_DIR} (DEPLOY_TOOLS_NO_INSTALL=1)` };
    const output = await new Promise<string>((resolve) => {
      const child = spawn('bash', [INSTALL_SCRIPT], { env: { ...process.env, DEPLOY_TOOLS_DIR: TOOLS_DIR }, stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      child.stdout.on('data', (c) => (text += c));
      child.stderr.on('data', (c) => (text += c));
      child.once('error', (err) => resolve(`${text}${err.message}`));
      child.once('exit', () => resolve(text));
    });
    const tools = located();
    const last = output.trim().split('\n').pop() ?? '';
    return { tools, reason: tools ? '' : `test/deploy/install-tools.sh could not install them: ${last}` };
  })();
  return pending;
}

/**
 * The tools for a test, or null after printing one line: the test then fails,
 * or passes when ALLOW_SKIP=1. Installing may take minutes the first time.
 */
export async function requireTools(t: ExecutionContext): Promise<DeployTools | null> {
  t.timeout(40 * 60_000, 'installing the deploy tools (first run compiles helm and promtool)');
  const { tools, reason } = await deployTools();
  if (tools) return tools;
  const line = `deploy checks: helm, kubeconform, promtool, hadolint or the Kubernetes schemas are missing: ${reason}`;
  if (!told) console.log(line);
  told = true;
  if (process.env.ALLOW_SKIP === '1') {
    t.log(`${line} (ALLOW_SKIP=1: not failing)`);
    t.pass();
  } else {
    t.fail(`${line}. Run bash test/deploy/install-tools.sh, or set ALLOW_SKIP=1 to let this pass.`);
  }
  return null;
}

export interface RunResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function run(command: string, args: string[], options: { cwd?: string; input?: string } = {}): RunResult {
  const result = spawnSync(command, args, { cwd: options.cwd, input: options.input, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: 5 * 60_000 });
  return { status: result.status, stdout: result.stdout ?? '', stderr: `${result.stderr ?? ''}${result.error ? result.error.message : ''}` };
}

export function readText(file: string): string {
  return readFileSync(file, 'utf8');
}
