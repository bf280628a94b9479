/**
 * Renders items in order while keeping a few renders running ahead of the
 * consumer: chunk n+1 is synthesised while chunk n is being sent, so the
 * listener hears no gap, yet memory stays bounded by the lookahead depth.
 */
import { linkedController } from '../../core/speechkit/abort.ts';

export interface LookaheadOptions {
  /** renders allowed to run ahead of the one being consumed */
  depth: number;
  signal?: AbortSignal;
}

export async function* renderAhead<T, R>(
  items: readonly T[],
  render: (item: T, signal: AbortSignal) => Promise<R>,
  options: LookaheadOptions,
): AsyncGenerator<R> {
  // Aborted in `finally`: a consumer that stops early must not leave renders running.
  const controller = linkedController(options.signal);
  const pending: Array<Promise<R>> = [];
  let next = 0;
  const startUpTo = (limit: number) => {
    while (next < items.length && next <= limit) {
      const job = render(items[next++], controller.signal);
      // Rejections of renders nobody awaits (after an abort) must not crash the process.
      job.catch(() => undefined);
      pending.push(job);
    }
  };
  const depth = Math.max(0, options.depth);
  try {
    for (let i = 0; i < items.length; i++) {
      // The first item renders alone: it decides time to first audio, and on a
      // busy CPU a render running beside it slows it down. Lookahead starts
      // the moment it is done, long before its audio has been played.
      startUpTo(i === 0 ? 0 : i + depth);
      const result = await pending.shift()!;
      if (i === 0) startUpTo(depth);
      yield result;
    }
  } finally {
    controller.abort();
  }
}
