/**
 * Worker-thread side of spawn-thread.ts: runs child processes for the main
 * thread. fork() of a large process blocks its caller for tens of
 * milliseconds; here it blocks this thread, not the event loop.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { parentPort } from 'node:worker_threads';
import { yieldToEventLoop } from '../../core/speechkit/worker-pool.ts';
import type { SpawnReply, SpawnRequest } from './spawn-thread.ts';

yieldToEventLoop();

const children = new Map<number, ChildProcess>();

function reply(message: SpawnReply, transfer: ArrayBuffer[] = []): void {
  parentPort!.postMessage(message, transfer);
}

parentPort!.on('message', (request: SpawnRequest) => {
  if (request.kill !== undefined) {
    children.get(request.kill)?.kill('SIGKILL');
    return;
  }
  const { id, command, args, input } = request;
  const out: Buffer[] = [];
  let stderr = '';
  let child: ChildProcess;
  try {
    child = spawn(command!, args!, { stdio: ['pipe', 'pipe', 'pipe'] });
  } catch (err) {
    reply({ id: id!, error: (err as NodeJS.ErrnoException).code ?? (err as Error).message });
    return;
  }
  children.set(id!, child);
  child.stdout!.on('data', (d: Buffer) => out.push(d));
  child.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
  child.on('error', (err: NodeJS.ErrnoException) => {
    children.delete(id!);
    reply({ id: id!, error: err.code ?? err.message });
  });
  child.on('close', (code, sig) => {
    if (!children.delete(id!)) return;
    const stdout = Buffer.concat(out);
    const bytes = stdout.buffer.slice(stdout.byteOffset, stdout.byteOffset + stdout.length) as ArrayBuffer;
    reply({ id: id!, stdout: bytes, stderr, code, signal: sig }, [bytes]);
  });
  child.stdin!.on('error', () => undefined);
  child.stdin!.end(input, 'utf8');
});
