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
 *
 * Waiting out maxWaitMs is right for a trickle, wrong for a backlog: kafkajs
 * fetches a partition again only once its delivery has returned, so when
 * every delivery in progress is waiting on the open batch nothing more can
 * join it. If one of them left messages behind on the broker (the group is
 * catching up), the batch closes then instead of idling for the timer: a
 * drain after an outage ran one batch per member per second. So does the
 * batch right after one closed that way: the tail of the catch-up.
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
  backlog: boolean;
}

export interface ChunkInfo {
  /** the partition holds more messages than this chunk (lag behind it) */
  backlog: boolean;
}

export interface BatchGatherer<M> {
  /**
   * Adds one partition's chunk (at most maxBatch messages), from inside a
   * `delivery`; resolves with whether the batch holding it was handled.
   */
  add(chunk: M[], info?: ChunkInfo): Promise<boolean>;
  /** Runs one partition's delivery: the gatherer counts those in progress to know when nothing more can come. */
  delivery<T>(work: () => Promise<T>): Promise<T>;
}

export function batchGatherer<M>(options: GathererOptions<M>): BatchGatherer<M> {
  const maxBatch = Math.max(1, options.maxBatch);
  let pending: Pending<M> | null = null;
  // Batches are handled one at a time, in the order they were closed.
  let previous: Promise<unknown> = Promise.resolve();
  let deliveries = 0;
  // The batch after the last one closed on a backlog is the tail of a catch-up: written at once too.
  let catchingUp = false;

  const close = (batch: Pending<M>) => {
    if (pending === batch) pending = null;
    if (batch.timer) clearTimeout(batch.timer);
    batch.timer = null;
    catchingUp = batch.backlog;
    // A handler that throws counts as not handled: its chunks stay uncommitted.
    const run = previous.then(() => options.handle(batch.messages)).catch(() => false);
    previous = run;
    void run.then((handled) => {
      for (const wake of batch.waiters) wake(handled);
    });
  };

  /**
   * Each waiter is a delivery blocked on the open batch; when all of them are and one left a backlog, waiting
   * gains nothing. Checked on the next turn: kafkajs starts a fetch's deliveries one after another, and the
   * first must not close the batch before the others of the same fetch have joined it.
   */
  let checkScheduled = false;
  const closeIfNothingCanJoin = () => {
    if (checkScheduled) return;
    checkScheduled = true;
    setImmediate(() => {
      checkScheduled = false;
      if (pending && (pending.backlog || catchingUp) && pending.waiters.length >= deliveries) close(pending);
    });
  };

  return {
    add(chunk, info) {
      if (chunk.length === 0) return Promise.resolve(true);
      // A chunk that would take the open batch past maxBatch closes it and starts the next; a batch that filled
      // means more was waiting, as a backlog does.
      if (pending && pending.messages.length + chunk.length > maxBatch) {
        pending.backlog = true;
        close(pending);
      }
      const batch: Pending<M> = pending ?? (pending = { messages: [], waiters: [], timer: null, backlog: false });
      batch.messages.push(...chunk);
      batch.backlog ||= info?.backlog ?? false;
      const joined = new Promise<boolean>((resolve) => batch.waiters.push(resolve));
      if (batch.messages.length >= maxBatch) {
        batch.backlog = true;
        close(batch);
      } else {
        batch.timer ??= setTimeout(() => close(batch), options.maxWaitMs);
        closeIfNothingCanJoin();
      }
      return joined;
    },
    async delivery(work) {
      deliveries++;
      try {
        return await work();
      } finally {
        deliveries--;
        closeIfNothingCanJoin();
      }
    },
  };
}
