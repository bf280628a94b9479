import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { watchPlatform } from './checked-fetch.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface ChildPlatform {
  child: ChildProcess;
  /** API base URL when the process runs the api role */
  url: string | null;
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** resolves with the exit code (or the signal's name) once the process is gone */
  exited: Promise<number | string>;
}

/*
 * `npm test` exports the addresses of the servers it started for the adapter
 * contract suites; a child runs on the embedded defaults unless its test
 * names a production adapter itself.
 */
const ADAPTER_SELECTORS = ['KAFKA_BROKERS', 'MONGODB_URL', 'CLICKHOUSE_URL', 'REDIS_URL'];

function inheritedEnv(): NodeJS.ProcessEnv {
  const inherited = { ...process.env };
  for (const name of ADAPTER_SELECTORS) delete inherited[name];
  return inherited;
}

/**
 * Runs `core/main.ts` (what `npm start` runs) as a child process, so tests
 * can kill it the hard way. Resolves once the platform logged its start.
 * Responses the test receives from it are checked against its API reference.
 */
export async function startChildPlatform(env: Record<string, string>, timeoutMs = 60_000): Promise<ChildPlatform> {
  const child = spawn(process.execPath, ['--import=tsx', 'core/main.ts'], {
    cwd: ROOT,
    env: { ...inheritedEnv(), HOST: '127.0.0.1', PORT: '0', OPS_PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let url: string | null = null;
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  const started = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`child platform did not start:\n${out}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/[^\s/]+)/.exec(out);
      if (match) url = match[1];
      if (out.includes('"platform started"')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`child platform exited with ${code}:\n${out}`));
    });
  });
  await started;
  // The URL line is printed right after the start log line.
  const servesApi = (env.ROLES ?? 'api').includes('api');
  for (let i = 0; i < 50 && url === null && servesApi; i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  // The test's calls to it are checked against its API reference, as for an in-process platform.
  if (url) {
    const unwatch = await watchPlatform(url, null);
    void exited.then(unwatch);
  }
  return {
    child,
    get url() {
      return url;
    },
    output: () => out,
    exited,
    kill(signal = 'SIGKILL') {
      return new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill(signal);
      });
    },
  };
}
