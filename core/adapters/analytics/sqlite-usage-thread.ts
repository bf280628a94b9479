/**
 * A worker thread that runs named read-only statements over its own
 * connection to the embedded database file, one at a time in arrival
 * order, so a long `/usage` query never stalls the event loop (WAL lets it
 * read beside the writer). Started on the first query; it does not keep
 * the process alive; a crashed thread fails the queries it held and the
 * next query starts a new one. The thread runs plain JavaScript (no
 * TypeScript loader is needed there) and receives its SQL as data.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { ReadRunner, UsageStatement } from './sqlite-usage-sql.ts';

const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
// Linux gives each thread its own nice value: the request-serving thread wins when both want the CPU.
try { require('node:os').setPriority(0, 10); } catch {}
const Database = require(workerData.driver);
const db = new Database(workerData.file, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 5000');
const statements = {};
for (const [name, sql] of Object.entries(workerData.statements)) statements[name] = db.prepare(sql);
parentPort.on('message', ({ id, name, params, single }) => {
  try {
    const statement = statements[name];
    parentPort.postMessage({ id, result: single ? statement.pluck().get(params) : statement.all(params) });
  } catch (err) {
    parentPort.postMessage({ id, error: String((err && err.message) || err) });
  }
});
`;

type Reply = { id: number; result: unknown } | { id: number; error: string };

export class ReadThread implements ReadRunner {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: unknown) => void; reject: (e: Error) => void }>();
  private readonly driver = createRequire(import.meta.url).resolve('better-sqlite3');

  constructor(private readonly file: string, private readonly statements: Record<UsageStatement, string>) {}

  all(name: UsageStatement, params: Record<string, unknown>): Promise<unknown[]> {
    return this.send(name, params, false) as Promise<unknown[]>;
  }

  value(name: UsageStatement, params: Record<string, unknown>): Promise<unknown> {
    return this.send(name, params, true);
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
    this.failAll(new Error('read thread closed'));
  }

  private send(name: UsageStatement, params: Record<string, unknown>, single: boolean): Promise<unknown> {
    const worker = this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ id, name, params, single });
    });
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(THREAD_SOURCE, { eval: true, workerData: { file: this.file, driver: this.driver, statements: this.statements } });
    worker.unref();
    worker.on('message', (reply: Reply) => {
      const waiter = this.pending.get(reply.id);
      if (!waiter) return;
      this.pending.delete(reply.id);
      if (this.pending.size === 0) worker.unref();
      if ('error' in reply) waiter.reject(new Error(reply.error));
      else waiter.resolve(reply.result);
    });
    const lost = (err: Error) => {
      if (this.worker === worker) this.worker = null;
      this.failAll(err);
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`read thread exited with ${code}`)));
    this.worker = worker;
    return worker;
  }

  private failAll(err: Error): void {
    for (const waiter of this.pending.values()) waiter.reject(err);
    this.pending.clear();
  }
}
