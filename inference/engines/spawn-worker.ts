/**
 * Worker-thread side of spawn-thread.ts: runs child processes for the main
 * thread. fork() of a large process blocks its caller for tens of
 * milliseconds; here it blocks this thread, not the event loop. The thread
 * keeps normal priority: its children (the synthesis itself) inherit it,
 * and time to first audio must not suffer.
 */
import { parentPort } from 'node:worker_threads';
import { SpawnError, spawnCollect } from './spawn-collect.ts';
import type { SpawnReply, SpawnRequest } from './spawn-thread.ts';

const running = new Map<number, AbortController>();

parentPort!.on('message', (request: SpawnRequest) => {
  if (request.kill !== undefined) {
    running.get(request.kill)?.abort();
    return;
  }
  const id = request.id!;
  const controller = new AbortController();
  running.set(id, controller);
  spawnCollect(request.command!, request.args!, request.input!, controller.signal).then(
    (result) => {
      const bytes = result.stdout.buffer.slice(result.stdout.byteOffset, result.stdout.byteOffset + result.stdout.length) as ArrayBuffer;
      parentPort!.postMessage({ id, stdout: bytes, stderr: result.stderr, code: result.code, signal: result.signal } satisfies SpawnReply, [bytes]);
    },
    (err: unknown) => parentPort!.postMessage({ id, error: err instanceof SpawnError ? err.code : String(err) } satisfies SpawnReply),
  ).finally(() => running.delete(id));
});
