import test from 'ava';
import { loggerReporter, LOGGED_IDS } from '../../core/adapters/bus/retry.ts';
import type { Logger } from '../../core/logger.ts';

test('a failed delivery of a large batch is one short log line: the count and the first few ids', (t) => {
  const lines: Array<{ msg: string; fields?: Record<string, unknown> }> = [];
  const logger = { warn: (msg: string, fields?: Record<string, unknown>) => void lines.push({ msg, fields }) } as unknown as Logger;
  const ids = Array.from({ length: 40_000 }, (_, i) => `out_${i}`);
  loggerReporter('local', logger)(new Error('write EPIPE'), { topic: 'request.outcomes', group: 'usage-aggregator', ids, attempt: 1 });
  t.is(lines.length, 1);
  t.like(lines[0].fields, { count: 40_000, messages: ids.slice(0, LOGGED_IDS), topic: 'request.outcomes', attempt: 1 });
  t.true(JSON.stringify(lines[0].fields).length < 1_000);
});
