import { MongoBulkWriteError, MongoServerError, type AnyBulkWriteOperation, type Collection, type Document } from 'mongodb';
import { perTurn } from '../../per-turn.ts';

/** MongoDB's duplicate-key error code: a unique index refused a write. */
export const DUPLICATE_KEY = 11000;

/** A statement's own failure within a shared bulk write (a duplicate key...). */
export type StatementError = MongoServerError;

/**
 * Unordered bulk writes made on one collection during one turn, sent as ONE
 * `bulkWrite` (per-turn.ts). Each caller's statements keep their own
 * outcome: the shared command's write errors go back to the statements they
 * belong to, null for those that were applied. Unordered statements may run
 * in any order, within a caller's list as between callers, so only lists
 * whose statements commute are sent this way (each is its own conditional
 * single-document write). A failure that is no one statement's (the
 * network, a write concern) fails every caller of the command: what it
 * applied is unknown, as it would be for a command of their own.
 */
export function unorderedBulkPerTurn<T extends Document>(collection: Collection<T>): (statements: AnyBulkWriteOperation<T>[]) => Promise<Array<StatementError | null>> {
  return perTurn<AnyBulkWriteOperation<T>[], Array<StatementError | null>>(async (lists) => {
    const failed = new Map<number, StatementError>();
    try {
      await collection.bulkWrite(lists.flat(), { ordered: false });
    } catch (err) {
      const statements = err instanceof MongoBulkWriteError && !err.result.getWriteConcernError() ? [err.writeErrors].flat() : [];
      if (statements.length === 0) throw err;
      for (const e of statements) failed.set(e.index, new MongoServerError({ message: e.errmsg ?? `write error ${e.code}`, code: e.code }));
    }
    let offset = 0;
    return lists.map((list) => {
      const outcomes = list.map((_, i) => failed.get(offset + i) ?? null);
      offset += list.length;
      return outcomes;
    });
  });
}
