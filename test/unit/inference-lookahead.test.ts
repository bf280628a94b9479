import test from 'ava';
import { renderAhead } from '../../inference/engines/lookahead.ts';

/** Records when each render starts relative to the others finishing. */
function recorder() {
  const log: string[] = [];
  const render = async (item: number) => {
    log.push(`start ${item}`);
    await new Promise((r) => setTimeout(r, 10));
    log.push(`done ${item}`);
    return item;
  };
  return { log, render };
}

test('the first item renders alone (it decides time to first audio); lookahead starts as soon as it is done', async (t) => {
  const { log, render } = recorder();
  const out: number[] = [];
  for await (const item of renderAhead([0, 1, 2, 3], render, { depth: 2 })) {
    out.push(item);
    if (item === 0) t.deepEqual(log, ['start 0', 'done 0', 'start 1', 'start 2'], 'items 1 and 2 started before item 0 is consumed');
  }
  t.deepEqual(out, [0, 1, 2, 3]);
  t.is(log.indexOf('start 1'), log.indexOf('done 0') + 1);
});

test('after the first item, renders run `depth` ahead of the consumer, in order', async (t) => {
  const { log, render } = recorder();
  const seenAtItem1: string[] = [];
  for await (const item of renderAhead([0, 1, 2, 3], render, { depth: 1 })) {
    if (item === 1) seenAtItem1.push(...log);
  }
  t.true(seenAtItem1.includes('start 2'), 'item 2 renders while item 1 is consumed');
  t.false(seenAtItem1.includes('start 3'), 'no deeper than the lookahead');
});
