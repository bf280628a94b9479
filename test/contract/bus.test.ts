import test, { type ExecutionContext } from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Bus, BusMessage, OutgoingMessage } from '../../core/ports/bus.ts';
import { openEmbeddedDb, type EmbeddedDb } from '../../core/adapters/embedded-db.ts';
import { createLocalBus } from '../../core/adapters/bus/local.ts';
import { createKafkaBus } from '../../core/adapters/bus/kafka.ts';

/** Opens buses on one backing store (a file, a cluster); a bus opened after another was closed is a restart. */
interface Harness {
  open(): Promise<Bus>;
  close(bus: Bus): Promise<void>;
  dispose(): void;
  /** time for a consumer group to settle after members join (Kafka rebalances take seconds) */
  settleMs: number;
}

const quiet = () => {};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function eventually(check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await sleep(10);
  }
}

const names = () => ({ topic: `t.${randomUUID()}`, group: `g.${randomUUID()}` });
const messages = (count: number, key: (i: number) => string, offset = 0): OutgoingMessage<{ n: number }>[] =>
  Array.from({ length: count }, (_, i) => ({ id: `m${i + offset}`, key: key(i + offset), value: { n: i + offset } }));

function busContract(name: string, harness: () => Harness) {
  const withBus = (title: string, body: (t: ExecutionContext, bus: Bus, h: Harness) => Promise<void>) =>
    test(`${name}: ${title}`, async (t) => {
      const h = harness();
      const bus = await h.open();
      try {
        await body(t, bus, h);
      } finally {
        await h.close(bus);
        h.dispose();
      }
    });

  withBus('a subscriber receives what was published, with id, key, value, publishedAt and attempt 1', async (t, bus) => {
    const { topic, group } = names();
    await bus.publish(topic, [{ id: 'a1', key: 'acct-1', value: { text: 'xin chào' } }]);
    const got: BusMessage[] = [];
    const sub = await bus.subscribe({ topic, group, handler: async (m) => { got.push(m); } });
    await eventually(() => got.length === 1);
    await sub.stop();
    const [m] = got;
    t.like(m, { id: 'a1', key: 'acct-1', value: { text: 'xin chào' }, attempt: 1 });
    t.false(Number.isNaN(Date.parse(m!.publishedAt)), 'publishedAt is an ISO time');
  });

  withBus('publishes made together, to several topics, all arrive in publication order; one that cannot be serialized fails alone', async (t, bus) => {
    const [a, b] = [names(), names()];
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const sent = await Promise.allSettled([
      ...Array.from({ length: 20 }, (_, i) => bus.publish((i % 2 ? a : b).topic, [{ id: `p${i}`, key: 'one-key', value: { n: i } }])),
      bus.publish(a.topic, [{ id: 'bad', key: 'one-key', value: cyclic }]),
    ]);
    t.deepEqual(sent.map((r) => r.status), [...Array<string>(20).fill('fulfilled'), 'rejected']);
    const got = new Map<string, number[]>([[a.topic, []], [b.topic, []]]);
    const subs = await Promise.all([a, b].map(({ topic, group }) =>
      bus.subscribe<{ n: number }>({ topic, group, handler: async (m) => { got.get(topic)!.push(m.value.n); } })));
    await eventually(() => got.get(a.topic)!.length === 10 && got.get(b.topic)!.length === 10);
    await Promise.all(subs.map((sub) => sub.stop()));
    t.deepEqual(got.get(a.topic), [1, 3, 5, 7, 9, 11, 13, 15, 17, 19]);
    t.deepEqual(got.get(b.topic), [0, 2, 4, 6, 8, 10, 12, 14, 16, 18]);
  });

  withBus('one publish larger than a broker takes in one request (3 MB under one key) is delivered whole, in publication order', async (t, bus) => {
    const { topic, group } = names();
    const padding = 'x'.repeat(1000);
    await bus.publish(topic, Array.from({ length: 3000 }, (_, i) => ({ id: `m${i}`, key: 'one', value: { n: i, padding } })));
    const seen: number[] = [];
    const sub = await bus.subscribeBatch<{ n: number }>({ topic, group, maxBatch: 5000, maxWaitMs: 200, handler: async (batch) => void seen.push(...batch.map((m) => m.value.n)) });
    await eventually(() => seen.length >= 3000, 30_000);
    await sub.stop();
    t.deepEqual(seen, Array.from({ length: 3000 }, (_, i) => i));
  });

  withBus('messages with the same key are handled in publication order; concurrency handles partitions in parallel', async (t, bus) => {
    const { topic, group } = names();
    for (let round = 0; round < 4; round++) await bus.publish(topic, messages(20, (i) => `k${i % 5}`, round * 20));
    const seen = new Map<string, number[]>();
    let inFlight = 0;
    let maxInFlight = 0;
    const sub = await bus.subscribe<{ n: number }>({
      topic, group, concurrency: 4,
      handler: async (m) => {
        maxInFlight = Math.max(maxInFlight, ++inFlight);
        await sleep(1 + (m.value.n % 3));
        seen.set(m.key, [...(seen.get(m.key) ?? []), m.value.n]);
        inFlight--;
      },
    });
    await eventually(() => [...seen.values()].flat().length === 80);
    await sub.stop();
    for (const [key, order] of seen) t.deepEqual(order, [...order].sort((a, b) => a - b), `${key} in order`);
    t.true(maxInFlight > 1, `at most ${maxInFlight} handler(s) ran at once`);
  });

  withBus('the offset is committed only after the handler resolves: a throwing handler gets the message again with a growing attempt', async (t, bus) => {
    const { topic, group } = names();
    await bus.publish(topic, messages(3, () => 'same-key'));
    const calls: string[] = [];
    const sub = await bus.subscribe({
      topic, group, maxAttempts: 5,
      handler: async (m) => {
        calls.push(`${m.id}#${m.attempt}`);
        if (m.id === 'm1' && m.attempt < 3) throw new Error('transient');
      },
    });
    await eventually(() => calls.includes('m2#1'));
    await sub.stop();
    t.deepEqual(calls, ['m0#1', 'm1#1', 'm1#2', 'm1#3', 'm2#1']);
    t.is(await bus.lag(topic, group), 0);
  });

  withBus('a message that fails maxAttempts times goes to <topic>.dlq and the partition moves on', async (t, bus) => {
    const { topic, group } = names();
    await bus.publish(topic, messages(2, () => 'k'));
    const attempts: number[] = [];
    const handled: string[] = [];
    const dead: BusMessage[] = [];
    const sub = await bus.subscribe({
      topic, group, maxAttempts: 3,
      handler: async (m) => {
        if (m.id === 'm0') { attempts.push(m.attempt); throw new Error('poison'); }
        handled.push(m.id);
      },
    });
    const dlq = await bus.subscribe({ topic: `${topic}.dlq`, group, handler: async (m) => { dead.push(m); } });
    await eventually(() => handled.length === 1 && dead.length === 1);
    await Promise.all([sub.stop(), dlq.stop()]);
    t.deepEqual(attempts, [1, 2, 3]);
    t.like(dead[0], { id: 'm0', key: 'k', value: { n: 0 } });
    t.is(await bus.lag(topic, group), 0, 'the dead-lettered message is committed');
  });

  withBus('a store out of reach uses up no attempt: the message is retried until it is handled, never dead-lettered', async (t, bus) => {
    const { topic, group } = names();
    await bus.publish(topic, messages(2, () => 'k'));
    const attempts: number[] = [];
    const handled: string[] = [];
    const dead: BusMessage[] = [];
    // MongoDB failing over, ClickHouse restarting: more failed deliveries in a row than maxAttempts allows.
    const outage = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:27017'), { code: 'ECONNREFUSED' });
    const sub = await bus.subscribe({
      topic, group, maxAttempts: 3,
      handler: async (m) => {
        if (m.id === 'm0') {
          attempts.push(m.attempt);
          if (m.attempt <= 6) throw outage();
        }
        handled.push(m.id);
      },
    });
    const dlq = await bus.subscribe({ topic: `${topic}.dlq`, group, handler: async (m) => { dead.push(m); } });
    await eventually(() => handled.length === 2);
    await sleep(100);
    await Promise.all([sub.stop(), dlq.stop()]);
    t.deepEqual(attempts, [1, 2, 3, 4, 5, 6, 7]);
    t.deepEqual(handled, ['m0', 'm1'], 'handled once, in order');
    t.deepEqual(dead, [], 'nothing dead-lettered');
    t.is(await bus.lag(topic, group), 0);
  });

  withBus('failures of the message itself still count between outages: it is dead-lettered after maxAttempts of them', async (t, bus) => {
    const { topic, group } = names();
    await bus.publish(topic, messages(1, () => 'k'));
    const attempts: number[] = [];
    const dead: BusMessage[] = [];
    const sub = await bus.subscribe({
      topic, group, maxAttempts: 3,
      handler: async (m) => {
        attempts.push(m.attempt);
        // outage, poison, outage, poison, poison: the third poison is the last
        if (m.attempt % 2 === 1 && m.attempt < 4) throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
        throw new Error('poison');
      },
    });
    const dlq = await bus.subscribe({ topic: `${topic}.dlq`, group, handler: async (m) => { dead.push(m); } });
    await eventually(() => dead.length === 1);
    await Promise.all([sub.stop(), dlq.stop()]);
    t.deepEqual(attempts, [1, 2, 3, 4, 5]);
    t.like(dead[0], { id: 'm0', value: { n: 0 } });
  });

  withBus('two groups each receive every message', async (t, bus) => {
    const { topic } = names();
    await bus.publish(topic, messages(10, (i) => `k${i}`));
    const a: string[] = [];
    const b: string[] = [];
    const subs = await Promise.all([
      bus.subscribe({ topic, group: `${topic}.a`, handler: async (m) => { a.push(m.id); } }),
      bus.subscribe({ topic, group: `${topic}.b`, handler: async (m) => { b.push(m.id); } }),
    ]);
    await eventually(() => a.length === 10 && b.length === 10);
    await Promise.all(subs.map((s) => s.stop()));
    t.deepEqual([a.sort(), b.sort()], [messages(10, String).map((m) => m.id).sort(), messages(10, String).map((m) => m.id).sort()]);
  });

  withBus('two members of one group split the partitions between them, with no duplicates', async (t, bus, h) => {
    const { topic, group } = names();
    const got = [new Array<string>(), new Array<string>()];
    const subs = await Promise.all(got.map((into) => bus.subscribe({ topic, group, handler: async (m) => { into.push(m.id); } })));
    await sleep(h.settleMs);
    await bus.publish(topic, messages(64, (i) => `key-${i % 16}`));
    await eventually(() => got[0]!.length + got[1]!.length >= 64);
    await sleep(100);
    await Promise.all(subs.map((s) => s.stop()));
    const all = [...got[0]!, ...got[1]!];
    t.is(all.length, 64);
    t.is(new Set(all).size, 64, 'no message handled twice');
    t.true(got[0]!.length > 0 && got[1]!.length > 0, `split ${got[0]!.length}/${got[1]!.length}`);
  });

  withBus('subscribeBatch hands at most maxBatch messages, retries a failed batch whole, and commits after success', async (t, bus) => {
    const { topic, group } = names();
    await bus.publish(topic, messages(25, (i) => `k${i % 3}`));
    const batches: BusMessage[][] = [];
    let failed = false;
    const sub = await bus.subscribeBatch({
      topic, group, maxBatch: 10, maxWaitMs: 200,
      handler: async (batch) => {
        batches.push(batch);
        if (!failed) { failed = true; throw new Error('store down'); }
      },
    });
    await eventually(() => new Set(batches.slice(1).flat().map((m) => m.id)).size === 25);
    await sleep(100);
    await sub.stop();
    t.true(batches.every((batch) => batch.length > 0 && batch.length <= 10), 'batch sizes within maxBatch');
    t.deepEqual(batches[1]!.map((m) => m.id), batches[0]!.map((m) => m.id), 'the failed batch comes back whole');
    t.true(batches[1]!.every((m) => m.attempt === 2), 'with attempt 2');
    t.is(batches.slice(1).flat().length, 25, 'no committed batch is delivered again');
    t.is(await bus.lag(topic, group), 0);
  });

  withBus('subscribeBatch fills batches up to maxBatch from a backlog larger than one 1 MB fetch', async (t, bus) => {
    const { topic, group } = names();
    // 3,000 messages of about 1 KB in one partition: 3 MB of backlog.
    const padding = 'x'.repeat(1000);
    for (let from = 0; from < 3000; from += 500) {
      await bus.publish(topic, Array.from({ length: 500 }, (_, i) => ({ id: `m${from + i}`, key: 'one', value: { i: from + i, padding } })));
    }
    const sizes: number[] = [];
    const sub = await bus.subscribeBatch({ topic, group, maxBatch: 2500, maxWaitMs: 200, handler: async (batch) => void sizes.push(batch.length) });
    await eventually(() => sizes.reduce((a, b) => a + b, 0) === 3000);
    await sub.stop();
    t.true(Math.max(...sizes) > 1100, `a batch held more than one 1 MB fetch: ${sizes.join(', ')}`);
  });

  withBus('subscribeBatch catching up: after a batch that filled from a backlog, the rest is written at once, not after maxWaitMs', async (t, bus) => {
    const { topic, group } = names();
    await bus.publish(topic, messages(300, (i) => `key-${i % 24}`));
    const sizes: number[] = [];
    const started = Date.now();
    const sub = await bus.subscribeBatch({ topic, group, maxBatch: 250, maxWaitMs: 8_000, handler: async (batch) => void sizes.push(batch.length) });
    await eventually(() => sizes.reduce((a, b) => a + b, 0) === 300, 20_000);
    const tookMs = Date.now() - started;
    await sub.stop();
    t.true(tookMs < 6_000, `drained in ${tookMs} ms, batches ${sizes.join(', ')}`);
    t.true(sizes.every((n) => n <= 250));
    t.is(await bus.lag(topic, group), 0);
  });

  withBus('subscribeBatch joins the messages of every partition that has some into one batch, within maxWaitMs', async (t, bus) => {
    const { topic, group } = names();
    // 24 keys spread the messages over every partition; one batch per partition would be one downstream write each.
    await bus.publish(topic, messages(48, (i) => `key-${i % 24}`));
    const batches: BusMessage[][] = [];
    const sub = await bus.subscribeBatch({ topic, group, maxBatch: 1000, maxWaitMs: 500, handler: async (batch) => void batches.push(batch) });
    await eventually(() => batches.flat().length === 48);
    await sub.stop();
    t.true(batches.length <= 2, `batch sizes: ${batches.map((b) => b.length).join(', ')}`);
    t.is(new Set(batches.flat().map((m) => m.id)).size, 48);
    t.is(await bus.lag(topic, group), 0);
  });

  withBus('lag is messages published but not committed by the group', async (t, bus) => {
    const { topic, group } = names();
    await bus.publish(topic, messages(5, (i) => `k${i}`));
    t.is(await bus.lag(topic, group), 5, 'a group that never committed lags by everything');
    let count = 0;
    const sub = await bus.subscribe({ topic, group, handler: async () => { count++; } });
    await eventually(() => count === 5);
    await sub.stop();
    t.is(await bus.lag(topic, group), 0);
    await bus.publish(topic, messages(3, (i) => `k${i}`, 5));
    t.is(await bus.lag(topic, group), 3);
  });

  withBus('stop() waits for in-flight handlers, and a restart resumes from the committed offset without loss', async (t, bus, h) => {
    const { topic, group } = names();
    await bus.publish(topic, messages(6, () => 'k'));
    const first: string[] = [];
    let m4Started = false;
    const sub = await bus.subscribe({
      topic, group, maxAttempts: 1000,
      handler: async (m) => {
        if (m.id === 'm5') throw new Error('not yet');
        if (m.id === 'm4') {
          m4Started = true;
          await sleep(200);
        }
        first.push(m.id);
      },
    });
    // stop() while m4 is in its handler (a fixed pause raced m3's commit on a loaded machine, and m4 never began)
    await eventually(() => m4Started);
    await sub.stop();
    t.deepEqual(first, ['m0', 'm1', 'm2', 'm3', 'm4'], 'stop() let m4 finish');
    await h.close(bus);

    const reopened = await h.open();
    try {
      await reopened.publish(topic, messages(2, () => 'k', 6));
      const second: string[] = [];
      const again = await reopened.subscribe({ topic, group, handler: async (m) => { second.push(m.id); } });
      await eventually(() => second.length === 3);
      await sleep(100);
      await again.stop();
      t.deepEqual(second, ['m5', 'm6', 'm7'], 'the uncommitted m5 comes back, nothing committed does');
    } finally {
      await h.close(reopened);
    }
  });
}

function localHarness(): Harness {
  const dir = mkdtempSync(path.join(tmpdir(), 'bus-contract-'));
  const dbs = new Map<Bus, EmbeddedDb>();
  return {
    settleMs: 0,
    async open() {
      const db = openEmbeddedDb(dir);
      const bus = createLocalBus(db, { pollMs: 50, partitions: 4, retryBackoffMs: 5, onError: quiet });
      dbs.set(bus, db);
      return bus;
    },
    async close(bus) {
      const db = dbs.get(bus);
      if (!db) return;
      dbs.delete(bus);
      await bus.close();
      db.close();
    },
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

busContract('local', localHarness);

test('local: a publish in this process wakes an idle subscriber at once, without waiting for the poll', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'bus-wake-'));
  const db = openEmbeddedDb(dir);
  const bus = createLocalBus(db, { pollMs: 60_000, onError: quiet });
  const { topic, group } = names();
  // A failed assertion throws (ava 6+): close in finally, or the 60 s poll loop keeps the worker alive.
  try {
    let receivedAt = 0;
    const sub = await bus.subscribe({ topic, group, handler: async () => { receivedAt = Date.now(); } });
    await sleep(50);
    const sentAt = Date.now();
    await bus.publish(topic, [{ id: 'x', key: 'k', value: 1 }]);
    // The rule, not the machine's speed: far sooner than the 60 s poll, however loaded the machine is.
    await eventually(() => receivedAt > 0, 10_000);
    t.true(receivedAt - sentAt < 5_000, `latency ${receivedAt - sentAt} ms`);
    await sub.stop();
  } finally {
    await bus.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('local: segments every group has committed are dropped, and retention caps a log nobody reads', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'bus-prune-'));
  const db = openEmbeddedDb(dir);
  const bus = createLocalBus(db, { partitions: 1, segmentSize: 100, onError: quiet });
  const capped = createLocalBus(db, { partitions: 1, segmentSize: 100, retainPerPartition: 100, onError: quiet });
  const rows = (topic: string) => (db.prepare('SELECT id FROM bus_segments WHERE topic = ?').pluck().all(topic) as number[])
    .reduce((sum, id) => sum + (db.prepare(`SELECT COUNT(*) FROM bus_segment_${id}`).pluck().get() as number), 0);
  try {
    const { topic, group } = names();
    let handled = 0;
    const sub = await bus.subscribe({ topic, group, handler: async () => { handled++; } });
    for (let i = 0; i < 6; i++) await bus.publish(topic, messages(100, () => 'k', i * 100));
    await eventually(() => handled === 600);
    await sub.stop();
    t.true(rows(topic) <= 100, `a fully read log keeps ${rows(topic)} rows, at most its last segment`);

    const unread = `${topic}.unread`;
    for (let i = 0; i < 6; i++) await capped.publish(unread, messages(100, () => 'k', i * 100));
    t.true(rows(unread) >= 100 && rows(unread) <= 100 + 100, `an unread log keeps ${rows(unread)} rows: its cap, plus at most a segment`);
    t.is(await capped.lag(unread, group), rows(unread), 'lag counts only what is still retained');
  } finally {
    await Promise.all([bus.close(), capped.close()]);
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

const brokers = process.env.KAFKA_BROKERS?.split(',').map((b) => b.trim()).filter(Boolean) ?? [];
if (brokers.length > 0) {
  busContract('kafka', () => ({
    settleMs: 8000,
    open: () => createKafkaBus({ brokers, clientId: `bus-contract-${process.pid}`, partitions: 4, retryBackoffMs: 5, onError: quiet }),
    close: (bus) => bus.close(),
    dispose: () => {},
  }));

  test('kafka: a record the broker refuses (over its size limit) fails its own publish, not the others of its turn', async (t) => {
    const bus = await createKafkaBus({ brokers, clientId: `bus-contract-${process.pid}`, partitions: 4, retryBackoffMs: 5, onError: quiet });
    t.teardown(() => bus.close());
    const { topic, group } = names();
    await bus.publish(topic, [{ id: 'warm', key: 'k', value: { n: -1 } }]);
    const sent = await Promise.allSettled([
      bus.publish(topic, [{ id: 'small-1', key: 'k', value: { n: 1 } }]),
      bus.publish(topic, [{ id: 'huge', key: 'k', value: { n: 0, pad: 'x'.repeat(2 * 1024 * 1024) } }]),
      bus.publish(topic, [{ id: 'small-2', key: 'k', value: { n: 2 } }]),
    ]);
    t.deepEqual(sent.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
    const got: string[] = [];
    const sub = await bus.subscribe({ topic, group, handler: async (m) => { got.push(m.id); } });
    await eventually(() => got.length === 3);
    await sub.stop();
    t.deepEqual(got, ['warm', 'small-1', 'small-2']);
  });
} else {
  console.log('bus contract: KAFKA_BROKERS is not set; skipping the Kafka adapter');
}
