/** Runs a process with `input` on stdin and collects what it prints; `signal` kills it. */
import { spawn } from 'node:child_process';

export interface SpawnResult {
  stdout: Buffer;
  stderr: string;
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class SpawnError extends Error {
  constructor(readonly code: string) {
    super(`could not run the process: ${code}`);
    this.name = 'SpawnError';
  }
}

export function spawnCollect(command: string, args: string[], input: string, signal?: AbortSignal): Promise<SpawnResult> {
  return new Promise((resolve, reject) => {
    let child;
    try {
      child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    } catch (err) {
      return reject(new SpawnError((err as NodeJS.ErrnoException).code ?? (err as Error).message));
    }
    const kill = () => child.kill('SIGKILL');
    signal?.addEventListener('abort', kill, { once: true });
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    child.on('error', (err: NodeJS.ErrnoException) => {
      signal?.removeEventListener('abort', kill);
      reject(new SpawnError(err.code ?? err.message));
    });
    child.on('close', (code, sig) => {
      signal?.removeEventListener('abort', kill);
      resolve({ stdout: Buffer.concat(out), stderr, code, signal: sig });
    });
    // EPIPE when the child dies early is reported through 'close' instead.
    child.stdin.on('error', () => undefined);
    child.stdin.end(input, 'utf8');
  });
}
