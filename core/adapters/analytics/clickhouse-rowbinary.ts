/**
 * RowBinary encoding for inserts. The usage aggregator writes every request
 * outcome, so inserts are the hot path: RowBinary costs the server the least
 * to parse on 18.16 and current releases alike, and needs no escaping at all
 * (strings are length-prefixed bytes), so no value can break out of a row.
 * Queries stay in SQL through clickhouse-sql.ts; this module never builds SQL.
 */

export type RowBinaryType = 'String' | 'Int8' | 'UInt8' | 'UInt16' | 'UInt64' | 'Float64' | 'Nullable(Float64)';

/**
 * A table's inserted columns in order: name, type, and how to read the value
 * from the object being written (the column's own key when left out).
 */
export type RowBinaryColumns<R> = ReadonlyArray<readonly [name: string, type: RowBinaryType, get?: (row: R) => unknown]>;

const TWO_32 = 4294967296;
const DEFAULT_CHUNK = 1 << 20;
const STRING = 0;
const UINT8 = 1;
const UINT16 = 2;
const UINT64 = 3;
const FLOAT64 = 4;
const NULLABLE_FLOAT64 = 5;
const INT8 = 6;
const CODES: Record<RowBinaryType, number> = {
  String: STRING, Int8: INT8, UInt8: UINT8, UInt16: UINT16, UInt64: UINT64, Float64: FLOAT64, 'Nullable(Float64)': NULLABLE_FLOAT64,
};
const MAX_UINT: Record<number, number> = { [UINT8]: 0xff, [UINT16]: 0xffff, [UINT64]: Number.MAX_SAFE_INTEGER };

function fail(column: string, type: RowBinaryType, value: unknown): never {
  throw new TypeError(`RowBinary: column ${column} (${type}) cannot hold ${typeof value === 'string' ? JSON.stringify(value) : String(value)}`);
}

/**
 * Encodes rows into Buffers of about `chunkBytes` each (a row may span two
 * chunks: the format is a byte stream). Throws before returning anything if
 * a value does not fit its column, so a bad row never reaches the server.
 * Written as flat loops over precomputed arrays: it runs once per column of
 * every event, and this shape keeps it a small share of the aggregator's time.
 */
export function encodeRowBinary<R>(rows: readonly R[], columns: RowBinaryColumns<R>, chunkBytes = DEFAULT_CHUNK): Buffer[] {
  const count = columns.length;
  const getters = columns.map(([name, , get]) => get ?? ((row: R) => (row as Record<string, unknown>)[name]));
  const codes = columns.map(([, type]) => CODES[type]);
  const chunks: Buffer[] = [];
  let buf = Buffer.allocUnsafe(chunkBytes);
  let pos = 0;

  const room = (bytes: number) => {
    if (pos + bytes <= buf.length) return;
    chunks.push(buf.subarray(0, pos));
    buf = Buffer.allocUnsafe(Math.max(chunkBytes, bytes));
    pos = 0;
  };

  const writeString = (s: string) => {
    const n = s.length;
    // Short ASCII (ids, routes, codes: almost every value) is copied byte by byte; a native call costs more.
    if (n < 128) {
      room(1 + n);
      const start = pos + 1;
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        buf[start + i] = c;
      }
      if (i === n) {
        buf[pos] = n;
        pos = start + n;
        return;
      }
    }
    const bytes = Buffer.byteLength(s, 'utf8');
    room(5 + bytes);
    let m = bytes;
    while (m >= 0x80) {
      buf[pos++] = (m & 0x7f) | 0x80;
      m >>>= 7;
    }
    buf[pos++] = m;
    pos += buf.write(s, pos, bytes, 'utf8');
  };

  const writeUint32 = (n: number) => {
    buf[pos++] = n & 0xff;
    buf[pos++] = (n >>> 8) & 0xff;
    buf[pos++] = (n >>> 16) & 0xff;
    buf[pos++] = n >>> 24;
  };

  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    for (let c = 0; c < count; c++) {
      const value = getters[c]!(row);
      const code = codes[c]!;
      if (code === STRING) {
        if (typeof value !== 'string') fail(columns[c]![0], columns[c]![1], value);
        writeString(value);
      } else if (code === FLOAT64 || code === NULLABLE_FLOAT64) {
        if (code === NULLABLE_FLOAT64) {
          // JSON inserts turned a non-finite number into null; RowBinary keeps that meaning.
          if (value === null || value === undefined || (typeof value === 'number' && !Number.isFinite(value))) {
            room(1);
            buf[pos++] = 1;
            continue;
          }
          room(1);
          buf[pos++] = 0;
        }
        if (typeof value !== 'number' || !Number.isFinite(value)) fail(columns[c]![0], columns[c]![1], value);
        room(8);
        pos = buf.writeDoubleLE(value, pos);
      } else if (code === INT8) {
        if (typeof value !== 'number' || !Number.isInteger(value) || value < -128 || value > 127) fail(columns[c]![0], columns[c]![1], value);
        room(1);
        buf[pos++] = value & 0xff;
      } else {
        if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_UINT[code]!) {
          fail(columns[c]![0], columns[c]![1], value);
        }
        if (code === UINT8) {
          room(1);
          buf[pos++] = value;
        } else if (code === UINT16) {
          room(2);
          buf[pos++] = value & 0xff;
          buf[pos++] = value >>> 8;
        } else {
          const hi = Math.floor(value / TWO_32);
          room(8);
          writeUint32(value - hi * TWO_32);
          writeUint32(hi);
        }
      }
    }
  }
  if (pos > 0) chunks.push(buf.subarray(0, pos));
  return chunks;
}
