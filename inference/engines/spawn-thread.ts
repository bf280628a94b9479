/**
 * Runs short-lived child processes (one espeak-ng run per text chunk) from a
 * worker thread. Spawning forks the whole process, which in a busy API
 * process blocks for 15 to 30 ms; many chunks a second would hold the event
 * loop that answers every other request. Requests are multiplexed on one
 * thread; an idle thread never keeps the process alive.
 */
import type { Worker } from 'node:worker_threads';
import { READY, startWorker } from '../../core/speechkit/worker-pool.ts';
import { siblingModule } from '../../core/speechkit/module-url.ts';
import { SpawnError, spawnCollect, type SpawnResult } from './spawn-collect.ts';

export { SpawnError, type SpawnResult };

export interface SpawnRequest {
  id?: number;
  command?: string;
  args?: string[];
  input?: string;
  /** id of a run to kill */
  kill?: number;
}

export interface SpawnReply {
  id: number;
  stdout?: ArrayBuffer;
  stderr?: string;
  code?: number | null;
  signal?: NodeJS.Signals | null;
  /** errno code (ENOENT) or message when the process could not run */
  error?: string;
}

/** The thread's module; exported so the compiled build's test can check it is there. */
export const SPAWN_WORKER = siblingModule(import.meta.url, 'spawn-worker');

class SpawnThread {
  private worker: Worker | null = null;
  private ready: Promise<void> | null = null;
  /** true once the thread has loaded; until then runs are spawned on the calling thread */
  isReady = false;
  /** set when the thread failed to load: it is not tried again in this process */
  unavailable = false;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(result: SpawnResult): void; reject(err: Error): void }>();

  start(): Promise<void> {
    if (this.ready) return this.ready;
    const worker = startWorker(SPAWN_WORKER);
    this.worker = worker;
    this.ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (message: SpawnReply | typeof READY) => {
        if (message !== READY) return this.settle(message);
        if (this.pending.size === 0) worker.unref();
        this.isReady = true;
        resolve();
      });
      const failAll = (err: Error) => {
        reject(err);
        if (!this.isReady) this.unavailable = true;
        this.isReady = false;
        this.worker = null;
        this.ready = null;
        for (const [, p] of this.pending) p.reject(err);
        this.pending.clear();
      };
      worker.on('error', (err: unknown) => failAll(err instanceof Error ? err : new Error(String(err))));
      worker.on('exit', (code) => failAll(new Error(`spawn thread exited with code ${code}`)));
    });
    this.ready.catch(() => undefined);
    return this.ready;
  }

  private settle(reply: SpawnReply): void {
    const waiter = this.pending.get(reply.id);
    if (!waiter) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.worker?.unref();
    if (reply.error !== undefined) waiter.reject(new SpawnError(reply.error));
    else waiter.resolve({ stdout: Buffer.from(reply.stdout!), stderr: reply.stderr ?? '', code: reply.code ?? null, signal: reply.signal ?? null });
  }

  async run(command: string, args: string[], input: string, signal?: AbortSignal): Promise<SpawnResult> {
    const id = this.nextId++;
    const ready = this.start();
    // Held while anything is pending, the starting thread included; released when the last run settles.
    this.worker!.ref();
    this.pending.set(id, { resolve: () => undefined, reject: () => undefined });
    try {
      await ready;
    } finally {
      this.pending.delete(id);
    }
    const worker = this.worker!;
    return new Promise<SpawnResult>((resolve, reject) => {
      const onAbort = () => worker.postMessage({ kill: id } satisfies SpawnRequest);
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = () => signal?.removeEventListener('abort', onAbort);
      this.pending.set(id, {
        resolve: (r) => { done(); resolve(r); },
        reject: (e) => { done(); reject(e); },
      });
      worker.ref();
      worker.postMessage({ id, command, args, input } satisfies SpawnRequest);
    });
  }
}

let shared: SpawnThread | null = null;

/**
 * Runs `command` with `input` on stdin, off the event loop once the spawn
 * thread is up; the first runs of a process (while the thread loads) and a
 * thread that cannot start spawn from the calling thread, as before.
 * `signal` kills the process.
 */
export function spawnOffLoop(command: string, args: string[], input: string, signal?: AbortSignal): Promise<SpawnResult> {
  shared ??= new SpawnThread();
  if (shared.isReady) return shared.run(command, args, input, signal);
  if (!shared.unavailable) shared.start().catch(() => undefined);
  return spawnCollect(command, args, input, signal);
}

/**
 * Starts loading the spawn thread now (an engine calls it when it is built,
 * at start-up), so the thread's module loading never overlaps live streams.
 */
export function warmSpawnThread(): void {
  shared ??= new SpawnThread();
  if (!shared.unavailable) shared.start().catch(() => undefined);
}
