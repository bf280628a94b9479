import { groupCommit, type EmbeddedDb } from '../embedded-db.ts';
import type { OutgoingMessage } from '../../ports/bus.ts';
import type { Statement } from 'better-sqlite3';

/**
 * The durable log behind the local bus: Kafka's model in SQLite tables.
 * A topic has a fixed number of partitions (set when it is first used), each
 * an append-only sequence; a consumer group keeps, per partition, the next
 * sequence number it has not yet handled.
 *
 * A partition's messages live in segments, as a Kafka partition's do: each
 * segment is a table of its own (`bus_segment_<id>`, keyed by sequence
 * number) listed in `bus_segments` with the first sequence number it holds;
 * it holds every message up to the next segment's first. Pruning drops whole
 * segments: dropping a table frees its pages at about half a microsecond a
 * message, where deleting a range of rows from one shared table cost 7 to
 * 11 µs a message (a B-tree delete per row), a fifth of what the usage
 * aggregator spent draining a backlog.
 */

const SCHEMA = `
CREATE TABLE IF NOT EXISTS bus_partitions (
  topic TEXT NOT NULL,
  part INTEGER NOT NULL,
  next_seq INTEGER NOT NULL,
  PRIMARY KEY (topic, part)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS bus_segments (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  topic TEXT NOT NULL,
  part INTEGER NOT NULL,
  base_seq INTEGER NOT NULL,
  UNIQUE (topic, part, base_seq)
);
CREATE TABLE IF NOT EXISTS bus_offsets (
  grp TEXT NOT NULL,
  topic TEXT NOT NULL,
  part INTEGER NOT NULL,
  next_seq INTEGER NOT NULL,
  PRIMARY KEY (grp, topic, part)
) WITHOUT ROWID;
`;

const segmentTable = (id: number) => `bus_segment_${id}`;

const SEGMENT_COLUMNS = `(
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  published_at TEXT NOT NULL
)`;

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

/**
 * Messages a partition's segment takes before the next append starts a new
 * one (an append is never split, so a segment may hold one append more).
 * Consumed messages wait for their whole segment: about 2.5 MB of outcome
 * events per partition at most.
 */
export const DEFAULT_SEGMENT_SIZE = 4096;

interface Segment {
  id: number;
  base: number;
}

/** Prepared statements of the segment tables in use; cleared when it grows past this (tables dropped by another process). */
const MAX_CACHED_SEGMENTS = 256;

export function openMessageLog(db: EmbeddedDb, defaultPartitions: number, retainPerPartition: number, segmentSize = DEFAULT_SEGMENT_SIZE) {
  db.exec(SCHEMA);
  const partitionCounts = new Map<string, number>();

  const countPartitions = db.prepare('SELECT COUNT(*) FROM bus_partitions WHERE topic = ?').pluck();
  const createPartition = db.prepare('INSERT OR IGNORE INTO bus_partitions (topic, part, next_seq) VALUES (?, ?, 0)');
  const nextSeq = db.prepare('SELECT next_seq FROM bus_partitions WHERE topic = ? AND part = ?').pluck();
  // Reserves `n` sequence numbers of a partition in one statement; answers the first of them.
  const reserve = db.prepare('UPDATE bus_partitions SET next_seq = next_seq + ? WHERE topic = ? AND part = ? RETURNING next_seq - ?').pluck();
  const selectSegments = db.prepare('SELECT id, base_seq AS base FROM bus_segments WHERE topic = ? AND part = ? ORDER BY base_seq');
  const selectLastSegment = db.prepare('SELECT id, base_seq AS base FROM bus_segments WHERE topic = ? AND part = ? ORDER BY base_seq DESC LIMIT 1');
  const insertSegment = db.prepare('INSERT INTO bus_segments (topic, part, base_seq) VALUES (?, ?, ?) RETURNING id').pluck();
  const deleteSegment = db.prepare('DELETE FROM bus_segments WHERE id = ?');
  const selectCommitted = db.prepare('SELECT next_seq FROM bus_offsets WHERE grp = ? AND topic = ? AND part = ?').pluck();
  const registerGroup = db.prepare('INSERT OR IGNORE INTO bus_offsets (grp, topic, part, next_seq) VALUES (?, ?, ?, 0)');
  // Monotonic: a late commit from a member that lost the partition can never move a group backwards.
  const upsertCommit = db.prepare(`INSERT INTO bus_offsets (grp, topic, part, next_seq) VALUES (?, ?, ?, ?)
    ON CONFLICT (grp, topic, part) DO UPDATE SET next_seq = excluded.next_seq WHERE excluded.next_seq > bus_offsets.next_seq`);
  const selectBacklog = db.prepare(`SELECT p.part FROM bus_partitions p
    LEFT JOIN bus_offsets o ON o.grp = ? AND o.topic = p.topic AND o.part = p.part
    WHERE p.topic = ? AND p.next_seq > COALESCE(o.next_seq, 0)`).pluck();
  // A segment holds every sequence number from its base to the next one's: the oldest base is the oldest message kept.
  const selectLag = db.prepare(`SELECT p.next_seq AS high, COALESCE(o.next_seq, 0) AS committed,
      COALESCE((SELECT MIN(s.base_seq) FROM bus_segments s WHERE s.topic = p.topic AND s.part = p.part), p.next_seq) AS low
    FROM bus_partitions p LEFT JOIN bus_offsets o ON o.grp = ? AND o.topic = p.topic AND o.part = p.part
    WHERE p.topic = ?`);
  const minCommitted = db.prepare('SELECT MIN(next_seq) FROM bus_offsets WHERE topic = ? AND part = ?').pluck();

  /**
   * Each segment table's two statements; a segment's part is fixed, so it is
   * part of its SELECT. An id can come back (a rolled-back append's segment),
   * maybe for another partition: the part is checked.
   */
  const statements = new Map<number, { part: number; insert: Statement; select: Statement }>();
  function segmentStatements(segment: number, part: number) {
    let found = statements.get(segment);
    if (found?.part !== part) {
      if (statements.size >= MAX_CACHED_SEGMENTS) statements.clear();
      const table = segmentTable(segment);
      found = {
        part,
        insert: db.prepare(`INSERT INTO ${table} (seq, id, key, value, published_at) VALUES (?, ?, ?, ?, ?)`),
        select: db.prepare(`SELECT ${part} AS part, seq, id, key, value, published_at AS publishedAt
          FROM ${table} WHERE seq >= ? ORDER BY seq LIMIT ?`),
      };
      statements.set(segment, found);
    }
    return found;
  }

  /** Starts the partition's next segment at `base`; runs inside the append's transaction, so a rolled-back append leaves none. */
  function startSegment(topic: string, part: number, base: number): Segment {
    const id = insertSegment.get(topic, part, base) as number;
    db.exec(`CREATE TABLE ${segmentTable(id)} ${SEGMENT_COLUMNS}`);
    return { id, base };
  }

  /** The segment an append starting at `first` goes to: the last one, unless it is full. */
  function segmentFor(topic: string, part: number, first: number): Segment {
    const last = selectLastSegment.get(topic, part) as Segment | undefined;
    return last && first - last.base < segmentSize ? last : startSegment(topic, part, first);
  }

  /**
   * Moves a log written before segments (one `bus_messages` table) into one
   * segment per partition, once, under the write lock, so two processes
   * opening the file together move it once.
   */
  const legacyTable = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'bus_messages'").pluck();
  if (legacyTable.get()) {
    db.transaction(() => {
      if (!legacyTable.get()) return;
      const kept = db.prepare('SELECT topic, part, MIN(seq) AS base FROM bus_messages GROUP BY topic, part').all() as Array<{ topic: string; part: number; base: number }>;
      for (const { topic, part, base } of kept) {
        const { id } = startSegment(topic, part, base);
        db.prepare(`INSERT INTO ${segmentTable(id)} (seq, id, key, value, published_at)
          SELECT seq, id, key, value, published_at FROM bus_messages WHERE topic = ? AND part = ? ORDER BY seq`).run(topic, part);
      }
      db.exec('DROP TABLE bus_messages');
    })();
  }

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
    // Created inside a transaction, the partitions are known only once it commits: it may roll them back.
    if (!db.inTransaction) partitionCounts.set(topic, count);
    return count;
  }

  /**
   * Drops the segments whose every message each group has handled, and those
   * wholly beyond the retention cap even if a group lags. The last segment
   * goes only once full: appends would otherwise start a table per turn.
   */
  const prune = db.transaction((topic: string, part: number) => {
    const high = nextSeq.get(topic, part) as number;
    const slowest = minCommitted.get(topic, part) as number | null;
    const before = Math.max(slowest ?? 0, high - retainPerPartition);
    if (before <= 0) return;
    const segments = selectSegments.all(topic, part) as Segment[];
    segments.forEach((segment, i) => {
      const end = segments[i + 1]?.base ?? high;
      const full = i + 1 < segments.length || high - segment.base >= segmentSize;
      if (end > before || !full) return;
      statements.delete(segment.id);
      db.exec(`DROP TABLE IF EXISTS ${segmentTable(segment.id)}`);
      deleteSegment.run(segment.id);
    });
  });

  /**
   * Up to `limit` messages of a partition from `fromSeq` on, across its
   * segments. One read transaction: the list of segments and their tables
   * are one snapshot, so another process pruning meanwhile cannot drop a
   * table between the two (it takes no write lock).
   */
  const fetch = db.transaction((topic: string, part: number, fromSeq: number, limit: number): StoredMessage[] => {
    const segments = selectSegments.all(topic, part) as Segment[];
    let found: StoredMessage[] = [];
    for (let i = 0; i < segments.length && found.length < limit; i++) {
      const end = segments[i + 1]?.base;
      if (end !== undefined && end <= fromSeq) continue;
      const rows = segmentStatements(segments[i]!.id, part).select.all(fromSeq, limit - found.length) as StoredMessage[];
      found = found.length === 0 ? rows : found.concat(rows);
    }
    return found;
  }).deferred;

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
      const { insert } = segmentStatements(segmentFor(topic, part, first).id, part);
      list.forEach((message, i) => {
        insert.run(first + i, message.id, message.key, message.value, publishedAt);
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

    fetch,

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
        for (const part of nextByPart.keys()) prune(topic, part);
      }).immediate();
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
