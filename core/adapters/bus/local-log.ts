import { groupCommit, type EmbeddedDb } from '../embedded-db.ts';
import type { OutgoingMessage } from '../../ports/bus.ts';

/**
 * The durable log behind the local bus: Kafka's model in three tables.
 * A topic has a fixed number of partitions (set when it is first used), each
 * an append-only sequence; a consumer group keeps, per partition, the next
 * sequence number it has not yet handled.
 */

const SCHEMA = `
CREATE TABLE IF NOT EXISTS bus_partitions (
  topic TEXT NOT NULL,
  part INTEGER NOT NULL,
  next_seq INTEGER NOT NULL,
  PRIMARY KEY (topic, part)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS bus_messages (
  topic TEXT NOT NULL,
  part INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  id TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  published_at TEXT NOT NULL,
  PRIMARY KEY (topic, part, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS bus_offsets (
  grp TEXT NOT NULL,
  topic TEXT NOT NULL,
  part INTEGER NOT NULL,
  next_seq INTEGER NOT NULL,
  PRIMARY KEY (grp, topic, part)
) WITHOUT ROWID;
`;

export interface StoredMessage {
  part: number;
  seq: number;
  id: string;
  key: string;
  value: string;
  publishedAt: string;
}

/** Pruning runs when a sequence number crosses a multiple of this, on append and on commit. */
const PRUNE_EVERY = 256;

/** True when the sequence numbers [first, end) hold a positive multiple of PRUNE_EVERY. */
export function holdsPrunePoint(first: number, end: number): boolean {
  return Math.floor((end - 1) / PRUNE_EVERY) > Math.floor((Math.max(first, 1) - 1) / PRUNE_EVERY);
}

/** FNV-1a over the key's UTF-8 bytes: stable across processes and restarts, so a key keeps its partition. */
export function partitionOf(key: string, partitions: number): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(key, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % partitions;
}

/** A message as the log stores it: its value already JSON. */
interface EncodedMessage {
  id: string;
  key: string;
  value: string;
}

const encodeMessage = (message: OutgoingMessage): EncodedMessage =>
  ({ id: message.id, key: message.key, value: JSON.stringify(message.value ?? null) });

export type MessageLog = ReturnType<typeof openMessageLog>;

export function openMessageLog(db: EmbeddedDb, defaultPartitions: number, retainPerPartition: number) {
  db.exec(SCHEMA);
  const partitionCounts = new Map<string, number>();

  const countPartitions = db.prepare('SELECT COUNT(*) FROM bus_partitions WHERE topic = ?').pluck();
  const createPartition = db.prepare('INSERT OR IGNORE INTO bus_partitions (topic, part, next_seq) VALUES (?, ?, 0)');
  const nextSeq = db.prepare('SELECT next_seq FROM bus_partitions WHERE topic = ? AND part = ?').pluck();
  // Reserves `n` sequence numbers of a partition in one statement; answers the first of them.
  const reserve = db.prepare('UPDATE bus_partitions SET next_seq = next_seq + ? WHERE topic = ? AND part = ? RETURNING next_seq - ?').pluck();
  const insertMessage = db.prepare(`INSERT INTO bus_messages (topic, part, seq, id, key, value, published_at)
    VALUES (?, ?, ?, ?, ?, ?, ?)`);
  const selectMessages = db.prepare(`SELECT part, seq, id, key, value, published_at AS publishedAt
    FROM bus_messages WHERE topic = ? AND part = ? AND seq >= ? ORDER BY seq LIMIT ?`);
  const selectCommitted = db.prepare('SELECT next_seq FROM bus_offsets WHERE grp = ? AND topic = ? AND part = ?').pluck();
  const registerGroup = db.prepare('INSERT OR IGNORE INTO bus_offsets (grp, topic, part, next_seq) VALUES (?, ?, ?, 0)');
  // Monotonic: a late commit from a member that lost the partition can never move a group backwards.
  const upsertCommit = db.prepare(`INSERT INTO bus_offsets (grp, topic, part, next_seq) VALUES (?, ?, ?, ?)
    ON CONFLICT (grp, topic, part) DO UPDATE SET next_seq = excluded.next_seq WHERE excluded.next_seq > bus_offsets.next_seq`);
  const selectBacklog = db.prepare(`SELECT p.part FROM bus_partitions p
    LEFT JOIN bus_offsets o ON o.grp = ? AND o.topic = p.topic AND o.part = p.part
    WHERE p.topic = ? AND p.next_seq > COALESCE(o.next_seq, 0)`).pluck();
  const selectLag = db.prepare(`SELECT p.next_seq AS high, COALESCE(o.next_seq, 0) AS committed,
      COALESCE((SELECT MIN(m.seq) FROM bus_messages m WHERE m.topic = p.topic AND m.part = p.part), p.next_seq) AS low
    FROM bus_partitions p LEFT JOIN bus_offsets o ON o.grp = ? AND o.topic = p.topic AND o.part = p.part
    WHERE p.topic = ?`);
  const minCommitted = db.prepare('SELECT MIN(next_seq) FROM bus_offsets WHERE topic = ? AND part = ?').pluck();
  const deleteBefore = db.prepare('DELETE FROM bus_messages WHERE topic = ? AND part = ? AND seq < ?');

  function ensureTopic(topic: string): number {
    const known = partitionCounts.get(topic);
    if (known !== undefined) return known;
    let count = countPartitions.get(topic) as number;
    if (count === 0) {
      db.transaction(() => {
        for (let part = 0; part < defaultPartitions; part++) createPartition.run(topic, part);
      }).immediate();
      count = countPartitions.get(topic) as number;
    }
    partitionCounts.set(topic, count);
    return count;
  }

  /** Drops what every group has handled, and anything beyond the retention cap even if a group lags. */
  function prune(topic: string, part: number): void {
    const high = nextSeq.get(topic, part) as number;
    const slowest = minCommitted.get(topic, part) as number | null;
    const before = Math.max(slowest ?? 0, high - retainPerPartition);
    if (before > 0) deleteBefore.run(topic, part, before);
  }

  const writes = groupCommit(db);
  const appendAll = db.transaction((topic: string, messages: EncodedMessage[], partitions: number, publishedAt: string) => {
    // Messages by partition, in publication order within each.
    const byPart = new Map<number, EncodedMessage[]>();
    for (const message of messages) {
      const part = partitionOf(message.key, partitions);
      const list = byPart.get(part);
      if (list) list.push(message);
      else byPart.set(part, [message]);
    }
    for (const [part, list] of byPart) {
      const first = reserve.get(list.length, topic, part, list.length) as number;
      list.forEach((message, i) => {
        insertMessage.run(topic, part, first + i, message.id, message.key, message.value, publishedAt);
      });
      if (holdsPrunePoint(first, first + list.length)) prune(topic, part);
    }
  });

  /**
   * The grouped appends of one turn, per topic, gathered into ONE write of the
   * group commit: one savepoint and one sequence reservation per partition for
   * all of them, instead of per publish (every request publishes its outcome).
   * Values are serialized by the caller's publish, so only the database itself
   * can fail the shared write, and it would have failed each of them alike.
   */
  const gathering = new Map<string, { messages: EncodedMessage[]; written: Promise<void> }>();
  function appendGathered(topic: string, partitions: number, messages: EncodedMessage[]): Promise<void> {
    const open = gathering.get(topic);
    if (open) {
      for (const message of messages) open.messages.push(message);
      return open.written;
    }
    const gathered = { messages: [...messages], written: Promise.resolve() };
    // Closed once its write runs (or its commit fails before running it): later publishes start the next one.
    const close = () => {
      if (gathering.get(topic) === gathered) gathering.delete(topic);
    };
    gathered.written = writes.run(() => {
      close();
      appendAll(topic, gathered.messages, partitions, new Date().toISOString());
    });
    gathered.written.catch(close);
    gathering.set(topic, gathered);
    return gathered.written;
  }

  const commitTx = db.transaction((group: string, topic: string, part: number, next: number) => {
    upsertCommit.run(group, topic, part, next);
    if (next % PRUNE_EVERY === 0) prune(topic, part);
  });

  return {
    ensureTopic,

    append(topic: string, messages: OutgoingMessage[]): void {
      const partitions = ensureTopic(topic);
      appendAll.immediate(topic, messages.map(encodeMessage), partitions, new Date().toISOString());
    },

    /** The same append, sharing one commit with the other writes of this turn (group commit). */
    async appendGrouped(topic: string, messages: OutgoingMessage[]): Promise<void> {
      const encoded = messages.map(encodeMessage);
      await appendGathered(topic, ensureTopic(topic), encoded);
    },

    commitGrouped(group: string, topic: string, part: number, next: number): Promise<void> {
      return writes.run(() => commitTx(group, topic, part, next));
    },

    fetch(topic: string, part: number, fromSeq: number, limit: number): StoredMessage[] {
      return selectMessages.all(topic, part, fromSeq, limit) as StoredMessage[];
    },

    committed(group: string, topic: string, part: number): number {
      return (selectCommitted.get(group, topic, part) as number | undefined) ?? 0;
    },

    /** Registers the group on every partition so that pruning waits for it from now on. */
    join(group: string, topic: string): void {
      const partitions = ensureTopic(topic);
      db.transaction(() => {
        for (let part = 0; part < partitions; part++) registerGroup.run(group, topic, part);
      }).immediate();
    },

    commit(group: string, topic: string, part: number, next: number): void {
      upsertCommit.run(group, topic, part, next);
      if (next % PRUNE_EVERY === 0) prune(topic, part);
    },

    commitMany(group: string, topic: string, nextByPart: Map<number, number>): void {
      db.transaction(() => {
        for (const [part, next] of nextByPart) upsertCommit.run(group, topic, part, next);
      }).immediate();
      for (const part of nextByPart.keys()) prune(topic, part);
    },

    /** Partitions holding messages the group has not committed. */
    backlog(group: string, topic: string): number[] {
      return selectBacklog.all(group, topic) as number[];
    },

    lag(topic: string, group: string): number {
      const rows = selectLag.all(group, topic) as Array<{ high: number; committed: number; low: number }>;
      return rows.reduce((sum, row) => sum + Math.max(0, row.high - Math.max(row.committed, row.low)), 0);
    },
  };
}
