/**
 * The one place where values become ClickHouse SQL text. ClickHouse 18.16 has
 * no query parameters, so every literal in every query goes through these
 * helpers; nothing else may splice a value into SQL.
 */

const STRING_ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  "'": "\\'",
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\0': '\\0',
  '\b': '\\b',
  '\f': '\\f',
};

/** Escapes one character of a quoted literal; control characters become \xHH so no raw byte can end a token. */
function escapeChar(ch: string): string {
  const named = STRING_ESCAPES[ch];
  if (named !== undefined) return named;
  return `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`;
}

// Backslash and quote are the only characters ClickHouse gives meaning inside
// '...'; control characters are escaped so logs and error messages stay on one line.
const NEEDS_ESCAPE = /[\\'\u0000-\u001f\u007f]/g;

/** A string literal: `'...'`. Unicode passes through as UTF-8. */
export function sqlString(value: string): string {
  if (typeof value !== 'string') throw new TypeError(`sqlString expects a string, got ${typeof value}`);
  return `'${value.replace(NEEDS_ESCAPE, escapeChar)}'`;
}

/** A quoted identifier (database, table or column name): `` `...` ``. */
export function sqlIdentifier(name: string): string {
  if (typeof name !== 'string' || name.length === 0) throw new TypeError('sqlIdentifier expects a non-empty string');
  if (name.includes('\0')) throw new TypeError('sqlIdentifier: NUL is not allowed in identifiers');
  return `\`${name.replace(/[\\`]/g, (ch) => `\\${ch}`).replace(/[\u0001-\u001f\u007f]/g, escapeChar)}\``;
}

/** A finite number or bigint, written so that ClickHouse reads back the same value. */
export function sqlNumber(value: number | bigint): string {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new TypeError(`sqlNumber expects a finite number, got ${String(value)}`);
  // Integers print exactly; other values keep full round-trip precision.
  return Number.isInteger(value) && Math.abs(value) <= Number.MAX_SAFE_INTEGER ? value.toFixed(0) : String(value);
}

/**
 * A DateTime literal at second precision (rounded down). Written as unix
 * seconds so that the server's time zone cannot shift it.
 */
export function sqlDateTime(date: Date): string {
  const ms = date instanceof Date ? date.getTime() : Number.NaN;
  if (!Number.isFinite(ms)) throw new TypeError('sqlDateTime expects a valid Date');
  const seconds = Math.floor(ms / 1000);
  if (seconds < 0 || seconds > 0xffffffff) throw new RangeError('sqlDateTime: date outside the DateTime range (1970 to 2106)');
  return `toDateTime(${seconds})`;
}

/** A comma-separated list of string literals for `IN (...)`; never empty, so `IN ()` cannot occur. */
export function sqlStringList(values: readonly string[]): string {
  if (values.length === 0) throw new RangeError('sqlStringList needs at least one value');
  return values.map(sqlString).join(', ');
}
