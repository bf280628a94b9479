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

test('a delivery waiting on a store out of reach is a short line without a stack, at attempts 1, 2, 4, 8 only', (t) => {
  const lines: Array<{ msg: string; fields?: Record<string, unknown> }> = [];
  const logger = { warn: (msg: string, fields?: Record<string, unknown>) => void lines.push({ msg, fields }) } as unknown as Logger;
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8123'), { code: 'ECONNREFUSED' });
  const report = loggerReporter('kafka', logger);
  for (let attempt = 1; attempt <= 10; attempt++) report(refused, { topic: 'request.outcomes', group: 'usage-aggregator', ids: ['out_1'], attempt });
  t.deepEqual(lines.map((l) => l.fields?.attempt), [1, 2, 4, 8]);
  t.regex(lines[0].msg, /cannot be reached; retried with backoff/);
  t.like(lines[0].fields, { reason: 'connect ECONNREFUSED 127.0.0.1:8123' });
  t.false('err' in (lines[0].fields ?? {}), 'no error object, so no stack trace');
});
