import { Readable } from 'node:stream';

/**
 * Runs a put's work on its source. A put that fails before its pipeline
 * reads the source (a bad key, a directory it cannot make) destroys a stream
 * source all the same: its writer waits on back-pressure, and only the
 * stream closing tells it that nothing reads it any more (renders hung on
 * such a write, holding their lease and the process's drain).
 */
export async function withSource<T>(data: Buffer | Readable, work: (source: Readable) => Promise<T>): Promise<T> {
  try {
    return await work(Buffer.isBuffer(data) ? Readable.from([data]) : data);
  } catch (err) {
    // Without an error: the writer's own 'error' listener may be gone; 'close' is what it waits on, and the put's error is the one to report.
    if (!Buffer.isBuffer(data) && !data.destroyed) data.destroy();
    throw err;
  }
}
