import test from 'ava';
import { outcomeProblem, jobCloseProblem } from '../../pipelines/usage-aggregator/validation.ts';
import type { OutcomeEvent } from '../../core/ports/analytics.ts';
import { encodeRowBinary, type RowBinaryType } from '../../core/adapters/analytics/clickhouse-rowbinary.ts';

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

/** The format written plainly, value by value, to check the encoder against. */
function referenceRowBinary(rows: Array<Record<string, unknown>>, columns: Array<[string, RowBinaryType]>): Buffer {
  const parts: Buffer[] = [];
  for (const row of rows) {
    for (const [name, type] of columns) {
      const value = row[name];
      if (type === 'String') {
        const bytes = Buffer.from(value as string, 'utf8');
        const length: number[] = [];
        let n = bytes.length;
        while (n >= 0x80) { length.push((n & 0x7f) | 0x80); n >>>= 7; }
        length.push(n);
        parts.push(Buffer.from(length), bytes);
      } else if (type === 'Nullable(Float64)' && (value === null || !Number.isFinite(value as number))) {
        parts.push(Buffer.from([1]));
      } else if (type === 'Float64' || type === 'Nullable(Float64)') {
        const b = Buffer.alloc(8);
        b.writeDoubleLE(value as number);
        parts.push(...(type === 'Nullable(Float64)' ? [Buffer.from([0])] : []), b);
      } else {
        const size = { Int8: 1, UInt8: 1, UInt16: 2, UInt64: 8 }[type];
        const b = Buffer.alloc(size);
        if (type === 'Int8') b.writeInt8(value as number);
        else if (type === 'UInt64') b.writeBigUInt64LE(BigInt(value as number));
        else b.writeUIntLE(value as number, 0, size);
        parts.push(b);
      }
    }
  }
  return Buffer.concat(parts);
}

test('RowBinary: random rows of every column type encode byte for byte as the format reads, whatever the chunk size', (t) => {
  let seed = 7;
  const rand = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  const pick = <T>(items: T[]) => items[Math.floor(rand() * items.length)]!;
  const text = () => pick([
    '', 'job_01HZX', 'Tiếng Việt 🎙', 'x'.repeat(127), 'x'.repeat(128), 'é'.repeat(70), 'ascii then ữ', 'y'.repeat(20_000), '\u0000\t\n',
  ]);
  const columns: Array<[string, RowBinaryType]> = [
    ['s', 'String'], ['i8', 'Int8'], ['u8', 'UInt8'], ['u16', 'UInt16'], ['u64', 'UInt64'], ['f', 'Float64'], ['nf', 'Nullable(Float64)'], ['t', 'String'],
  ];
  const rows = Array.from({ length: 400 }, () => ({
    s: text(), i8: pick([-128, -1, 0, 127]), u8: pick([0, 1, 255]), u16: pick([0, 258, 65535]),
    u64: pick([0, 2 ** 32, 2 ** 40 + 1, Number.MAX_SAFE_INTEGER]), f: pick([0, -0.5, 1e300, Math.PI]),
    nf: pick([null, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 0]), t: text(),
  }));
  const expected = referenceRowBinary(rows, columns);
  t.true(expected.length > 1_000_000);
  // Buffer.equals: a deep comparison of megabytes through ava's diffing takes seconds.
  for (const chunk of [64, 4096, 1 << 20]) t.true(Buffer.concat(encodeRowBinary(rows, columns, chunk)).equals(expected), `chunks of ${chunk}`);
});

test('RowBinary names the column and the value it cannot hold', (t) => {
  t.throws(() => encodeRowBinary([{ a: 'ok', b: 2 ** 16 }], [['a', 'String'], ['b', 'UInt16']]), { message: 'RowBinary: column b (UInt16) cannot hold 65536' });
  t.throws(() => encodeRowBinary([{ f: Number.NaN }], [['f', 'Float64']]), { message: 'RowBinary: column f (Float64) cannot hold NaN' });
  t.throws(() => encodeRowBinary([{ i: 1.5 }], [['i', 'Int8']]), { message: 'RowBinary: column i (Int8) cannot hold 1.5' });
});
