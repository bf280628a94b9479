import test from 'ava';
import { outcomeProblem, jobCloseProblem } from '../../pipelines/usage-aggregator/validation.ts';
import type { OutcomeEvent } from '../../core/ports/analytics.ts';
import { encodeRowBinary } from '../../core/adapters/analytics/clickhouse-rowbinary.ts';

const good: OutcomeEvent = {
  id: 'out_1', at: '2026-11-21T10:00:00.000Z', requestId: 'r', accountId: 'a', keyId: 'k', grantId: 'g', route: 'tts', status: 201,
  result: 'queued', tokensCharged: 195, tokensRefunded: 0, characters: 50, audioSeconds: 0, genMs: null, voice: 'v', voiceName: 'V',
  engine: 'v4', errorCode: null, cacheHit: false, queued: true, jobId: 'job_1',
};

test('a well-formed outcome passes', (t) => {
  t.is(outcomeProblem(good), null);
});

const BAD: Array<[string, Partial<OutcomeEvent>, RegExp]> = [
  ['an unparseable time', { at: 'yesterday' }, /at/],
  ['a negative token count', { tokensCharged: -5 }, /tokensCharged/],
  ['a fractional character count', { characters: 1.5 }, /characters/],
  ['a status outside HTTP', { status: 42 }, /status/],
  ['an unknown result', { result: 'maybe' as OutcomeEvent['result'] }, /result/],
  ['infinite audio seconds', { audioSeconds: Infinity }, /audioSeconds/],
  ['a missing id', { id: '' }, /id/],
];

for (const [rule, patch, reason] of BAD) {
  test(`a malformed outcome is set aside rather than stalling its batch: ${rule}`, (t) => {
    t.regex(outcomeProblem({ ...good, ...patch }) ?? '', reason);
  });
}

test('job closes are checked the same way', (t) => {
  const close = { id: 'c', at: '2026-11-21T10:00:00Z', jobId: 'j', result: 'ok' as const, audioSeconds: 2, genMs: 100, tokensRefunded: 0, errorCode: null };
  t.is(jobCloseProblem(close), null);
  t.truthy(jobCloseProblem({ ...close, tokensRefunded: -1 }));
  t.truthy(jobCloseProblem({ ...close, at: 'never' }));
});

test('RowBinary: strings are length-prefixed UTF-8, integers little-endian, nullable floats carry a null byte', (t) => {
  const rows = [{ s: 'Việt', n: 258, big: 2 ** 40 + 1, f: 1.5, nf: null }];
  const bytes = Buffer.concat(encodeRowBinary(rows, [['s', 'String'], ['n', 'UInt16'], ['big', 'UInt64'], ['f', 'Float64'], ['nf', 'Nullable(Float64)']]));
  const utf8 = Buffer.from('Việt', 'utf8');
  const expected = Buffer.alloc(1 + utf8.length + 2 + 8 + 8 + 1);
  let o = 0;
  expected[o++] = utf8.length;
  utf8.copy(expected, o);
  o += utf8.length;
  expected.writeUInt16LE(258, o);
  o += 2;
  expected.writeBigUInt64LE(2n ** 40n + 1n, o);
  o += 8;
  expected.writeDoubleLE(1.5, o);
  o += 8;
  expected[o] = 1;
  t.deepEqual(bytes, expected);
});

test('RowBinary refuses a value that does not fit its column before sending anything', (t) => {
  t.throws(() => encodeRowBinary([{ n: -1 }], [['n', 'UInt8']]), { instanceOf: TypeError });
  t.throws(() => encodeRowBinary([{ n: 256 }], [['n', 'UInt8']]), { instanceOf: TypeError });
  t.throws(() => encodeRowBinary([{ s: 5 }], [['s', 'String']]), { instanceOf: TypeError });
});

test('RowBinary splits long input across chunks without losing bytes', (t) => {
  const rows = Array.from({ length: 1000 }, (_, i) => ({ s: `row-${i}-${'x'.repeat(i % 300)}` }));
  const chunks = encodeRowBinary(rows, [['s', 'String']], 4096);
  t.true(chunks.length > 1);
  const total = rows.reduce((sum, r) => sum + Buffer.byteLength(r.s) + (Buffer.byteLength(r.s) < 128 ? 1 : 2), 0);
  t.is(Buffer.concat(chunks).length, total);
});
