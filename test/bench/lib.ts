import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
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

export async function spawnServer(script: string, env: Record<string, string> = {}): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  // BENCH_NODE_ARGS lets a profiling run add flags such as --cpu-prof to the server.
  const extra = process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : [];
  const child = spawn(process.execPath, [...extra, '--import=tsx', script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
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
