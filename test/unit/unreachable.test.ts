import test from 'ava';
import { MongoBulkWriteError, MongoNetworkError, MongoServerError, MongoServerSelectionError } from 'mongodb';
import { isUnreachableDependency } from '../../core/unreachable.ts';

/** A store or broker out of reach, or a disk that cannot take the write, is a 503 to retry (core/http/envelopes.ts); anything else stays a 500. */
const named = (name: string, extra: Record<string, unknown> = {}) => Object.assign(new Error(name), { name }, extra);
const labelled = (...labels: string[]) => Object.assign(new Error('bulk'), { name: 'MongoBulkWriteError', hasErrorLabel: (l: string) => labels.includes(l) });

const table: Array<[string, unknown, boolean]> = [
  ['a refused socket (ClickHouse, Redis, any HTTP store)', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8123'), { code: 'ECONNREFUSED' }), true],
  ['a reset socket', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }), true],
  ['MongoDB: no server selected in time', named('MongoServerSelectionError'), true],
  ['MongoDB: the connection dropped', named('MongoNetworkError'), true],
  ['MongoDB: a bulk write cut by a cleared pool (its cause\'s labels copied)', labelled('PoolRequestedRetry'), true],
  ['kafkajs: the broker cannot be reached', named('KafkaJSConnectionError'), true],
  ['a wrapped cause, two levels down', new Error('outer', { cause: new Error('middle', { cause: Object.assign(new Error('x'), { code: 'ETIMEDOUT' }) }) }), true],
  ['MongoDB: a duplicate key (a real refusal, no labels)', Object.assign(named('MongoServerError', { code: 11000 }), { hasErrorLabel: () => false }), false],
  ['a programming error', new TypeError('x is undefined'), false],
  ['SQLite: the disk is full (better-sqlite3\'s SqliteError code)', Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }), true],
  ['SQLite: a disk I/O error on write', Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' }), true],
  ['the audio directory: no space left on the device', Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }), true],
  ['SQLite: a constraint (a real refusal)', Object.assign(new Error('UNIQUE constraint failed'), { code: 'SQLITE_CONSTRAINT_UNIQUE' }), false],
  ['SQLite busy (handled where it happens)', Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }), false],
  ['not an error at all', 'boom', false],
  ['null', null, false],
];
// The driver's own error classes. A bulk write cut by a cleared pool copies the pool error's PoolRequestedRetry
// label (the pool error class is internal to the driver, so the label is added here as it would carry it).
const cutBulk = new MongoBulkWriteError(new MongoNetworkError('interrupted due to server monitor timeout'), {} as never);
cutBulk.addErrorLabel('PoolRequestedRetry');
table.push(
  ['the driver: MongoServerSelectionError', new MongoServerSelectionError('Server selection timed out after 30000 ms', {} as never), true],
  ['the driver: MongoNetworkError', new MongoNetworkError('connection 3 to 127.0.0.1:27017 closed'), true],
  ['the driver: a labelled MongoBulkWriteError', cutBulk, true],
  ['the driver: E11000 duplicate key', new MongoServerError({ code: 11000, errmsg: 'E11000 duplicate key error' }), false],
);

for (const [what, error, expected] of table) {
  test(`${expected ? 'unreachable' : 'not unreachable'}: ${what}`, (t) => {
    t.is(isUnreachableDependency(error), expected);
  });
}
