/** A worker for the WorkerPool tests: echoes, crashes, or hangs on request. */
import { parentPort } from 'node:worker_threads';

parentPort!.on('message', (input: { echo?: string; crash?: boolean; hang?: boolean }) => {
  if (input.crash) process.exit(3);
  if (input.hang) for (;;);
  parentPort!.postMessage({ echo: input.echo, thread: 'worker' });
});
