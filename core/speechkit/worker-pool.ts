/**
 * A small pool of worker threads for pure CPU work (text preparation), so a
 * long text never holds the event loop that answers every other request.
 * Hand-written rather than a pool library: the task is one message in, one
 * message out, and the pool needs exactly four things — a fixed size, a
 * bounded queue, a deadline that replaces a stuck worker, and idle workers
 * that never keep the process alive — which this does in a hundred lines
 * without loading TypeScript workers through a library's own bootstrap.
 */
import { constants, setPriority } from 'node:os';
import { Worker } from 'node:worker_threads';

/**
 * Called by a worker module: lowers the scheduling priority of its thread
 * (on Linux a thread has its own nice value, and processes it spawns inherit
 * it), so that on a small machine background CPU work yields to the event
 * loop answering requests rather than competing with it.
 */
export function yieldToEventLoop(): void {
  try {
    setPriority(constants.priority.PRIORITY_BELOW_NORMAL);
  } catch {
    // not permitted here: the work still runs, at normal priority
  }
}

export class PoolBusyError extends Error {
  constructor() {
    super('the worker pool queue is full');
    this.name = 'PoolBusyError';
  }
}

export interface WorkerPoolOptions {
  /** module the workers run; it answers each message with exactly one message */
  script: URL;
  size: number;
  /** tasks waiting beyond this are refused with PoolBusyError */
  maxQueue: number;
  /** a task running longer than this is failed and its worker replaced */
  taskTimeoutMs: number;
}

interface Task<I, O> {
  input: I;
  resolve(output: O): void;
  reject(err: Error): void;
}

interface Slot<I, O> {
  worker: Worker;
  /** a worker answers tasks only once its module has loaded (a TypeScript module takes a moment) */
  ready: boolean;
  task: Task<I, O> | null;
  timer: NodeJS.Timeout | null;
}

/** What a worker started by startWorker posts once its module has loaded. */
export const READY = '__worker_pool_ready__';

/**
 * Starts a worker on a module and has it say when the module has loaded; a
 * `.ts` module is loaded through tsx, as the rest of the service is.
 */
export function startWorker(script: URL): Worker {
  const register = script.pathname.endsWith('.ts') ? "import('tsx/esm/api').then(({ register }) => register())" : 'Promise.resolve()';
  const boot = `${register}.then(() => import(${JSON.stringify(script.href)}))
    .then(() => require('node:worker_threads').parentPort.postMessage(${JSON.stringify(READY)}))`;
  return new Worker(boot, { eval: true });
}

export class WorkerPool<I, O> {
  private readonly slots: Array<Slot<I, O>> = [];
  private readonly queue: Array<Task<I, O>> = [];

  constructor(private readonly options: WorkerPoolOptions) {}

  run(input: I): Promise<O> {
    if (this.queue.length >= this.options.maxQueue) return Promise.reject(new PoolBusyError());
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ input, resolve, reject });
      this.dispatch();
    });
  }

  /** Tasks running or waiting, for tests and metrics. */
  get pending(): number {
    return this.queue.length + this.slots.filter((s) => s.task).length;
  }

  async close(): Promise<void> {
    const slots = this.slots.splice(0);
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (this.queue.length === 0) return;
      if (!slot.ready || slot.task) continue;
      const task = this.queue.shift()!;
      slot.task = task;
      slot.worker.ref();
      slot.timer = setTimeout(() => this.fail(slot, new Error(`worker task exceeded ${this.options.taskTimeoutMs} ms`)), this.options.taskTimeoutMs);
      slot.worker.postMessage(task.input);
    }
    const starting = this.slots.filter((s) => !s.ready).length;
    for (let more = Math.min(this.queue.length - starting, this.options.size - this.slots.length); more > 0; more--) this.grow();
  }

  private grow(): void {
    const slot: Slot<I, O> = { worker: startWorker(this.options.script), ready: false, task: null, timer: null };
    slot.worker.on('message', (output: O | typeof READY) => {
      if (!slot.ready && output === READY) {
        slot.ready = true;
        slot.worker.unref();
      } else {
        this.settle(slot)?.resolve(output as O);
      }
      this.dispatch();
    });
    slot.worker.on('error', (err: unknown) => this.fail(slot, err instanceof Error ? err : new Error(String(err))));
    slot.worker.on('exit', (code) => this.fail(slot, new Error(`worker exited with code ${code}`)));
    this.slots.push(slot);
  }

  private settle(slot: Slot<I, O>): Task<I, O> | null {
    const task = slot.task;
    if (slot.timer) clearTimeout(slot.timer);
    slot.task = null;
    slot.timer = null;
    // An idle worker must not keep the process alive.
    slot.worker.unref();
    return task;
  }

  /**
   * Fails the slot's task and drops the worker; a fresh one starts on demand.
   * A worker that dies before it is ready fails the oldest waiting task, so
   * a pool that cannot start workers at all refuses tasks instead of retrying forever.
   */
  private fail(slot: Slot<I, O>, err: Error): void {
    const index = this.slots.indexOf(slot);
    if (index < 0) return;
    this.slots.splice(index, 1);
    const task = slot.ready ? this.settle(slot) : this.queue.shift() ?? null;
    void slot.worker.terminate();
    task?.reject(err);
    this.dispatch();
  }
}
