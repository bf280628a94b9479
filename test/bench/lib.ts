import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

/** Spawns a server script and resolves with its URL once it prints "listening on <url>". */
/**
 * Settings for a server driven by one load generator: the per-address edge
 * limits (one generator is one address) and the per-account route and queue
 * limits are lifted, so the figures measure the service, not its refusals.
 * The edge phase itself still runs (its cost is in the figures).
 */
export const LOAD_GENERATOR_ENV: Record<string, string> = {
  ACCOUNT_ROUTES_PER_MINUTE: '100000000', RATE_SPEECH_PER_MINUTE: '100000000', QUEUE_MAX_DEPTH: '100000000', USER_QUEUE_MAX: '100000000',
  EDGE_REQUESTS_PER_MINUTE: '100000000', EDGE_CONNECTIONS: '100000', EDGE_STREAM_REQUESTS_PER_MINUTE: '100000000', EDGE_STREAM_CONNECTIONS: '100000',
};

const BUILT_FOLDERS = ['core', 'plugins', 'pipelines', 'inference', 'config'];

/** The newest modification time of a .ts file under `dir`, in ms. */
function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(full));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(full).mtimeMs);
  }
  return newest;
}

/**
 * How a bench runs a platform script: the compiled build under dist/, as
 * `npm start` runs it in production, unless BENCH_BUILD=source asks for tsx.
 * A build older than any source file is refused rather than measured.
 */
export function serverArgs(script: string): string[] {
  const built = path.join('dist', script.replace(/\.ts$/, '.js'));
  const platformScript = BUILT_FOLDERS.some((folder) => script.startsWith(`${folder}/`));
  if (!platformScript || process.env.BENCH_BUILD === 'source') return ['--import=tsx', script];
  if (!existsSync(built)) throw new Error(`${built} is missing: run npm run build first (or BENCH_BUILD=source to measure through tsx)`);
  const sources = Math.max(...BUILT_FOLDERS.map(newestSource));
  if (statSync(built).mtimeMs < sources) throw new Error(`dist/ is older than the sources: run npm run build first (or BENCH_BUILD=source to measure through tsx)`);
  return [built];
}

export async function spawnServer(script: string, env: Record<string, string> = {}): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  // BENCH_NODE_ARGS lets a profiling run add flags such as --cpu-prof to the server.
  const extra = process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : [];
  const child = spawn(process.execPath, [...extra, ...serverArgs(script)], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  // BENCH_SERVER_LOG=<file> keeps the server's output, to see what it said under load.
  if (process.env.BENCH_SERVER_LOG) {
    const log = createWriteStream(process.env.BENCH_SERVER_LOG, { flags: 'a' });
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
  }
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start:\n${out}`)), 60_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/[^\s/]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        // Started: stop collecting its output (a long run would keep it all).
        child.stdout!.off('data', onData);
        child.stderr!.off('data', onData);
        child.stdout!.resume();
        child.stderr!.resume();
        resolve(m[1]);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${script} exited ${code}:\n${out}`)));
  });
  return {
    url,
    child,
    stop: () => new Promise((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
}

export async function load(options: autocannon.Options): Promise<LoadResult> {
  const result = await autocannon({ duration: 8, ...options });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

export function fmt(r: LoadResult): string {
  return `${r.rps.toFixed(0)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors}`;
}
