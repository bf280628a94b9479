import type { Writable } from 'node:stream';

/** The stream being written stopped taking data: whatever reads it (a store) failed or went away. */
export class OutputClosedError extends Error {
  constructor() {
    super('the audio output closed before everything was written');
    this.name = 'OutputClosedError';
  }
}

const isAbort = (err: Error) => err.name === 'AbortError' || (err as { code?: unknown }).code === 'ABORT_ERR';

/**
 * Writes `chunk`, then waits until `out` takes more. A store that fails
 * mid-write destroys the stream it reads, which then never drains: the wait
 * ends with OutputClosedError instead (job renders used to hang there for
 * good, their lease renewed, the job processing forever).
 */
export async function writeWithBackPressure(out: Writable, chunk: Buffer): Promise<void> {
  if (out.destroyed) throw new OutputClosedError();
  if (out.write(chunk)) return;
  await new Promise<void>((resolve, reject) => {
    const done = (err?: Error) => {
      out.off('drain', onDrain);
      out.off('close', onClose);
      out.off('error', onError);
      if (err) reject(err);
      else resolve();
    };
    const onDrain = () => done();
    const onClose = () => done(new OutputClosedError());
    // A reader that stops iterating destroys the stream with an AbortError: that is the output closing too, as on 'close'.
    const onError = (err: Error) => done(isAbort(err) ? new OutputClosedError() : err);
    out.on('drain', onDrain);
    out.on('close', onClose);
    out.on('error', onError);
  });
}

/**
 * Gives up a write into a store: destroys the stream the store reads, waits
 * for the store to settle, and answers the error to report. When the writing
 * stopped because the store failed, that is the store's own error (out of
 * reach, disk full: a 503 or a wait, core/unreachable.ts), not the
 * stream it closed.
 */
export async function abandonedWrite(out: Writable, stored: Promise<unknown>, err: unknown): Promise<unknown> {
  out.destroy();
  const storeError = await stored.then(() => null, (error: unknown) => error);
  return err instanceof OutputClosedError && storeError !== null ? storeError : err;
}
