import test from 'ava';
import { publishOrSpill, startSpillRelay } from '../../core/bus-spill.ts';
import { createLogger } from '../../core/logger.ts';
import type { Bus, OutgoingMessage } from '../../core/ports/bus.ts';
import type { SpilledMessage, SpillStore } from '../../core/ports/documents.ts';

const logger = createLogger('silent');

function memorySpill(failing = false): SpillStore & { kept: SpilledMessage[] } {
  const kept: SpilledMessage[] = [];
  return {
    kept,
    async add(messages) {
      if (failing) throw new Error('the store is out of reach');
      for (const m of messages) if (!kept.some((k) => k.topic === m.topic && k.id === m.id)) kept.push(m);
    },
    async pending(limit) {
      return kept.slice(0, limit);
    },
    async remove(messages) {
      for (const m of messages) kept.splice(kept.findIndex((k) => k.topic === m.topic && k.id === m.id), 1);
    },
  };
}

function fakeBus(state: { refusing: boolean }): Bus & { sent: Array<[string, OutgoingMessage[]]> } {
  const sent: Array<[string, OutgoingMessage[]]> = [];
  return {
    sent,
    async publish(topic: string, messages: OutgoingMessage[]) {
      if (state.refusing) throw new Error('the broker is out of reach');
      sent.push([topic, messages]);
    },
  } as unknown as Bus & { sent: Array<[string, OutgoingMessage[]]> };
}

const messages = [{ id: 'out_1', key: 'acc_1', value: { n: 1 } }, { id: 'out_2', key: 'acc_2', value: { n: 2 } }];

test('a message the bus takes is published and not kept', async (t) => {
  const bus = fakeBus({ refusing: false });
  const spill = memorySpill();
  t.is(await publishOrSpill({ bus, spill, logger }, 'request.outcomes', messages), 'published');
  t.deepEqual(bus.sent, [['request.outcomes', messages]]);
  t.deepEqual(spill.kept, []);
});

test('messages the bus refuses are kept with their topic', async (t) => {
  const spill = memorySpill();
  t.is(await publishOrSpill({ bus: fakeBus({ refusing: true }), spill, logger }, 'request.outcomes', messages), 'spilled');
  t.deepEqual(spill.kept, messages.map((m) => ({ topic: 'request.outcomes', ...m })));
});

test('when neither the bus nor the store takes them, the caller is told (it logs the loss)', async (t) => {
  await t.throwsAsync(publishOrSpill({ bus: fakeBus({ refusing: true }), spill: memorySpill(true), logger }, 'request.outcomes', messages), {
    instanceOf: AggregateError, message: /request\.outcomes: neither the bus nor the spill store took 2 message/,
  });
});

test('the relay publishes kept messages per topic, oldest first, and removes them only once the bus took them', async (t) => {
  const state = { refusing: true };
  const bus = fakeBus(state);
  const spill = memorySpill();
  await spill.add([{ topic: 'a', ...messages[0]! }, { topic: 'b', ...messages[1]! }, { topic: 'a', ...messages[1]! }]);
  const stop = startSpillRelay({ bus, spill, logger, intervalMs: 20, batch: 2 });
  t.teardown(stop);
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.is(spill.kept.length, 3, 'kept while the bus refuses');
  state.refusing = false;
  while (spill.kept.length > 0) await new Promise((resolve) => setTimeout(resolve, 10));
  // Batches of 2: the first pass takes a/out_1 and b/out_2, the next a/out_2.
  t.deepEqual(bus.sent, [['a', [messages[0]]], ['b', [messages[1]]], ['a', [messages[1]]]]);
});
