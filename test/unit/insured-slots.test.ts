import test from 'ava';
import { insuredSlots } from '../../core/adapters/counters/redis.ts';
import { createMemorySlots } from '../../core/adapters/counters/memory.ts';
import type { SlotPool } from '../../core/ports/counters.ts';

/** A store that works until `down` is set, like Redis going away. */
function flakyStore(): SlotPool & { down: boolean; released: string[] } {
  const real = createMemorySlots();
  const store = {
    down: false,
    released: [] as string[],
    async acquire(key: string, max: number, ttl: number) {
      if (store.down) throw new Error('the counters store (Redis) cannot be reached');
      return real.acquire(key, max, ttl);
    },
    async release(key: string, slotId: string) {
      if (store.down) throw new Error('the counters store (Redis) cannot be reached');
      store.released.push(slotId);
      return real.release(key, slotId);
    },
    async inUse(key: string) {
      if (store.down) throw new Error('the counters store (Redis) cannot be reached');
      return real.inUse(key);
    },
  };
  return store;
}

test('while the store fails, slots come from this process\'s pool with the same limit, and go back there', async (t) => {
  const store = flakyStore();
  const insurance = createMemorySlots();
  const warnings: string[] = [];
  const slots = insuredSlots(store, insurance, { warn: (message: string) => void warnings.push(message) });
  const shared = await slots.acquire('grant:g', 2, 60);
  t.true(shared.ok);
  store.down = true;
  const first = await slots.acquire('grant:g', 2, 60);
  const second = await slots.acquire('grant:g', 2, 60);
  const third = await slots.acquire('grant:g', 2, 60);
  t.deepEqual([first.ok, second.ok, third.ok], [true, true, false], 'the limit still holds, per process');
  t.is(await slots.inUse('grant:g'), 2);
  await slots.release('grant:g', first.slotId!);
  t.is(await insurance.inUse('grant:g'), 1, 'an insured slot is released in the insurance pool');
  await t.notThrowsAsync(slots.release('grant:g', shared.slotId!), 'a store slot whose release fails is left to the store (released once it is back)');
  t.is(warnings.length, 1, 'one warning per period, not one per call');
  store.down = false;
  await slots.release('grant:g', shared.slotId!);
  t.deepEqual(store.released, [shared.slotId]);
  t.true((await slots.acquire('grant:g', 2, 60)).slotId!.startsWith('mem:') === false, 'back on the store once it answers');
});
