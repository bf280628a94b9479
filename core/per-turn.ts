/**
 * Calls made during one turn of the event loop, sent as ONE command when the
 * turn's I/O has been handled (a DataLoader without a cache). A MongoDB
 * command or a Kafka produce request costs the API process far more CPU than
 * the documents or records in it, and a burst of `POST /tts` requests sends
 * the same few each: its account's grants, its content-cache key, its queue
 * slots, its job (MongoDB adapters; the cache key on the embedded file too),
 * its outcome event (Kafka bus), its job's publication (the jobs plugin).
 *
 * Nothing is sent early: a command leaves after every call in it was made,
 * so each caller sees every write that had finished before it called, as
 * with a command of its own. A failed command fails the calls in it and no
 * others; the next turn's calls go out afresh.
 */

/** Calls per command at most: a longer burst is split, so no command grows without bound. */
export const MAX_CALLS_PER_COMMAND = 256;

/** `send` answers each item in order (one answer per item). */
export function perTurn<I, O>(send: (items: I[]) => Promise<O[]>, maxItems = MAX_CALLS_PER_COMMAND): (item: I) => Promise<O> {
  type Batch = { items: I[]; answers: Promise<O[]>; send: () => void };
  let open: Batch | null = null;

  const openBatch = (): Batch => {
    let go!: () => void;
    const items: I[] = [];
    const answers = new Promise<void>((resolve) => (go = resolve)).then(() => send(items));
    const batch: Batch = {
      items,
      answers,
      // Closed to new calls first; sending twice (full, then the turn's end) sends once.
      send: () => {
        if (open === batch) open = null;
        go();
      },
    };
    setImmediate(batch.send);
    return batch;
  };

  return async (item) => {
    const batch = (open ??= openBatch());
    const at = batch.items.push(item) - 1;
    // A full batch leaves now; the next call opens another.
    if (batch.items.length >= maxItems) batch.send();
    return (await batch.answers)[at]!;
  };
}

/** Reads by key, one query per turn for all of them; each key is asked for once. */
export function readsPerTurn<K, V>(readMany: (keys: K[]) => Promise<Map<K, V>>, maxKeys = MAX_CALLS_PER_COMMAND): (key: K) => Promise<V | undefined> {
  return perTurn<K, V | undefined>(async (keys) => {
    const found = await readMany([...new Set(keys)]);
    return keys.map((key) => found.get(key));
  }, maxKeys);
}
