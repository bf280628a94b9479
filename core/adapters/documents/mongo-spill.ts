import type { Collection, Db } from 'mongodb';
import type { SpilledMessage, SpillStore } from '../../ports/documents.ts';

interface SpillDoc {
  /** topic and id: one document per message */
  _id: string;
  topic: string;
  id: string;
  key: string;
  value: unknown;
  /** when it was spilled, strictly increasing in one process; the oldest are published first */
  spilledAt: Date;
}

const idOf = (m: Pick<SpilledMessage, 'topic' | 'id'>) => `${m.topic}\n${m.id}`;

/** Spilled bus messages on MongoDB (`bus_spill`). */
export async function createMongoSpill(db: Db): Promise<SpillStore> {
  const spill: Collection<SpillDoc> = db.collection<SpillDoc>('bus_spill');
  await spill.createIndex({ spilledAt: 1, _id: 1 });
  let lastMs = 0;
  return {
    async add(messages) {
      if (messages.length === 0) return;
      lastMs = Math.max(Date.now(), lastMs + 1);
      const spilledAt = new Date(lastMs);
      // An upsert that inserts only: a message spilled again keeps its first place.
      await spill.bulkWrite(messages.map((m) => ({
        updateOne: { filter: { _id: idOf(m) }, update: { $setOnInsert: { topic: m.topic, id: m.id, key: m.key, value: m.value, spilledAt } }, upsert: true },
      })), { ordered: false });
    },
    async pending(limit) {
      if (limit <= 0) return [];
      const docs = await spill.find({}).sort({ spilledAt: 1, _id: 1 }).limit(limit).toArray();
      return docs.map(({ topic, id, key, value }) => ({ topic, id, key, value }));
    },
    async remove(messages) {
      if (messages.length > 0) await spill.deleteMany({ _id: { $in: messages.map(idOf) } });
    },
  };
}
