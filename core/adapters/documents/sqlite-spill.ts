import { groupCommit, type EmbeddedDb } from '../embedded-db.ts';
import type { SpilledMessage, SpillStore } from '../../ports/documents.ts';

/** Spilled bus messages on the embedded file (`bus_spill`, in the order they came). */
export function createSqliteSpill(db: EmbeddedDb): SpillStore {
  const insert = db.prepare('INSERT OR IGNORE INTO bus_spill (topic, id, key, value) VALUES (?, ?, ?, ?)');
  const insertAll = db.transaction((messages: readonly SpilledMessage[]) => {
    for (const m of messages) insert.run(m.topic, m.id, m.key, JSON.stringify(m.value));
  });
  const select = db.prepare('SELECT topic, id, key, value FROM bus_spill ORDER BY seq LIMIT ?');
  const remove = db.prepare('DELETE FROM bus_spill WHERE topic = ? AND id = ?');
  const removeAll = db.transaction((messages: ReadonlyArray<Pick<SpilledMessage, 'topic' | 'id'>>) => {
    for (const m of messages) remove.run(m.topic, m.id);
  });
  const writes = groupCommit(db);
  return {
    async add(messages) {
      if (messages.length > 0) await writes.run(() => insertAll(messages));
    },
    async pending(limit) {
      if (limit <= 0) return [];
      return (select.all(limit) as Array<Omit<SpilledMessage, 'value'> & { value: string }>).map((row) => ({ ...row, value: JSON.parse(row.value) as unknown }));
    },
    async remove(messages) {
      if (messages.length > 0) await writes.run(() => removeAll(messages));
    },
  };
}
