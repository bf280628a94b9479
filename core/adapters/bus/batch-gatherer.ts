/**
 * One batch out of several partitions' fetches, for the Kafka batch
 * subscriber. kafkajs hands a consumer's messages over one partition at a
 * time, each as soon as the broker has any: handled as they come, every
 * partition's trickle became its own batch, and so its own downstream write.
 * In the soak at 44 requests a second the usage aggregator wrote ClickHouse
 * 32 times a second with two rows per insert, and ClickHouse's merges
 * rewrote 175,000 rows a second to fold the tiny parts in. Here the
 * partitions' chunks join one batch, handed to the handler when it holds
 * `maxBatch` messages or `maxWaitMs` after its first chunk came, as the
 * embedded bus fills its batches; each chunk's caller learns whether the
 * batch it joined was handled, and only then commits its partition.
 */
export interface GathererOptions<M> {
  maxBatch: number;
  maxWaitMs: number;
  /**
   * Handles one batch, retrying it as the subscriber's rules say; resolves
   * true when it was handled, false when the subscriber stopped first (the
   * chunks in it are then left uncommitted, to be delivered again).
   */
  handle: (messages: M[]) => Promise<boolean>;
}

interface Pending<M> {
  messages: M[];
  waiters: Array<(handled: boolean) => void>;
  timer: NodeJS.Timeout | null;
}

export interface BatchGatherer<M> {
  /** Adds one partition's chunk (at most maxBatch messages); resolves with whether the batch holding it was handled. */
  add(chunk: M[]): Promise<boolean>;
}

export function batchGatherer<M>(options: GathererOptions<M>): BatchGatherer<M> {
  const maxBatch = Math.max(1, options.maxBatch);
  let pending: Pending<M> | null = null;
  // Batches are handled one at a time, in the order they were closed.
  let previous: Promise<unknown> = Promise.resolve();

  const close = (batch: Pending<M>) => {
    if (pending === batch) pending = null;
    if (batch.timer) clearTimeout(batch.timer);
    batch.timer = null;
    // A handler that throws counts as not handled: its chunks stay uncommitted.
    const run = previous.then(() => options.handle(batch.messages)).catch(() => false);
    previous = run;
    void run.then((handled) => {
      for (const wake of batch.waiters) wake(handled);
    });
  };

  return {
    add(chunk) {
      if (chunk.length === 0) return Promise.resolve(true);
      // A chunk that would take the open batch past maxBatch closes it and starts the next.
      if (pending && pending.messages.length + chunk.length > maxBatch) close(pending);
      const batch: Pending<M> = pending ?? (pending = { messages: [], waiters: [], timer: null });
      batch.messages.push(...chunk);
      const joined = new Promise<boolean>((resolve) => batch.waiters.push(resolve));
      if (batch.messages.length >= maxBatch) close(batch);
      else batch.timer ??= setTimeout(() => close(batch), options.maxWaitMs);
      return joined;
    },
  };
}
