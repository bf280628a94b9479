/**
 * RowBinary encoding for inserts. The usage aggregator writes every request
 * outcome, so inserts are the hot path: RowBinary costs the server the least
 * to parse on 18.16 and current releases alike, and needs no escaping at all
 * (strings are length-prefixed bytes), so no value can break out of a row.
 * Queries stay in SQL through clickhouse-sql.ts; this module never builds SQL.
 */

export type RowBinaryType = 'String' | 'UInt8' | 'UInt16' | 'UInt64' | 'Float64' | 'Nullable(Float64)';

export type RowBinaryColumns<R> = ReadonlyArray<readonly [keyof R & string, RowBinaryType]>;

const TWO_32 = 4294967296;
const DEFAULT_CHUNK = 1 << 20;

function fail(column: string, type: RowBinaryType, value: unknown): never {
  throw new TypeError(`RowBinary: column ${column} (${type}) cannot hold ${typeof value === 'string' ? JSON.stringify(value) : String(value)}`);
}

/**
 * Encodes rows into Buffers of about `chunkBytes` each (a row may span two
 * chunks: the format is a byte stream). Throws before returning anything if
 * a value does not fit its column, so a bad row never reaches the server.
 */
export function encodeRowBinary<R>(rows: readonly R[], columns: RowBinaryColumns<R>, chunkBytes = DEFAULT_CHUNK): Buffer[] {
  const chunks: Buffer[] = [];
  let buf = Buffer.allocUnsafe(chunkBytes);
  let pos = 0;

  const room = (bytes: number) => {
    if (pos + bytes <= buf.length) return;
    chunks.push(buf.subarray(0, pos));
    buf = Buffer.allocUnsafe(Math.max(chunkBytes, bytes));
    pos = 0;
  };

  const varint = (n: number) => {
    while (n >= 0x80) {
      buf[pos++] = (n & 0x7f) | 0x80;
      n = Math.floor(n / 128);
    }
    buf[pos++] = n;
  };

  const string = (s: string) => {
    const n = s.length;
    // Short ASCII (ids, routes, codes: almost every value) is copied byte by byte; a native call costs more.
    if (n < 128) {
      room(1 + n);
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        buf[pos + 1 + i] = c;
      }
      if (i === n) {
        buf[pos] = n;
        pos += 1 + n;
        return;
      }
    }
    const bytes = Buffer.byteLength(s, 'utf8');
    room(5 + bytes);
    varint(bytes);
    pos += buf.write(s, pos, bytes, 'utf8');
  };

  const uint = (value: unknown, max: number, column: string, type: RowBinaryType): number => {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max) fail(column, type, value);
    return value;
  };

  for (const row of rows) {
    for (const [column, type] of columns) {
      const value = row[column] as unknown;
      switch (type) {
        case 'String':
          if (typeof value !== 'string') fail(column, type, value);
          string(value);
          break;
        case 'UInt8':
          room(1);
          buf[pos++] = uint(value, 0xff, column, type);
          break;
        case 'UInt16':
          room(2);
          pos = buf.writeUInt16LE(uint(value, 0xffff, column, type), pos);
          break;
        case 'UInt64': {
          const n = uint(value, Number.MAX_SAFE_INTEGER, column, type);
          const hi = Math.floor(n / TWO_32);
          room(8);
          pos = buf.writeUInt32LE(n - hi * TWO_32, pos);
          pos = buf.writeUInt32LE(hi, pos);
          break;
        }
        case 'Float64':
          if (typeof value !== 'number' || !Number.isFinite(value)) fail(column, type, value);
          room(8);
          pos = buf.writeDoubleLE(value, pos);
          break;
        case 'Nullable(Float64)':
          // JSON inserts turned a non-finite number into null; RowBinary keeps that meaning.
          if (value === null || value === undefined || (typeof value === 'number' && !Number.isFinite(value))) {
            room(1);
            buf[pos++] = 1;
          } else {
            if (typeof value !== 'number') fail(column, type, value);
            room(9);
            buf[pos++] = 0;
            pos = buf.writeDoubleLE(value, pos);
          }
          break;
      }
    }
  }
  if (pos > 0) chunks.push(buf.subarray(0, pos));
  return chunks;
}
