/**
 * The embedded bus's log on its own: `npx tsx test/bench/local-log.ts [checkout]`.
 *
 * What the log costs per message, on a file as the platform opens it (WAL,
 * IMMEDIATE transactions), without HTTP, ClickHouse or handlers:
 * - append: the accept path's pattern, each turn of the group commit
 *   gathering 20 publishes to each of three topics (outcome, ledger entry,
 *   job message) of about 450 bytes;
 * - drain: one group reading it all back, 5,000 messages per partition per
 *   fetch, committing each fetch (`commitMany`, which prunes what every
 *   group has read), as the usage aggregator's batch worker does.
 * Prints the CPU of the process per message for each phase (medians of 3
 * rounds) and the file's size at the end. There is no target: it is how a
 * change to the log is measured. `checkout` (a path) runs the same
 * workload against another checkout's log, for a before/after on one
 * machine.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const root = path.resolve(process.argv[2] ?? here);
const { openEmbeddedDb } = (await import(path.join(root, 'core/adapters/embedded-db.ts'))) as typeof import('../../core/adapters/embedded-db.ts');
const { openMessageLog } = (await import(path.join(root, 'core/adapters/bus/local-log.ts'))) as typeof import('../../core/adapters/bus/local-log.ts');

const TOPICS = ['request.outcomes', 'ledger.entries', 'tts.jobs'];
const PER_TOPIC_PER_TURN = 20;
const TURNS = 2000;
const PARTITIONS = 8;
const FETCH = 5000;
const ROUNDS = 3;
const GROUP = 'bench';

const cpuMicros = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return used.user + used.system;
};
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function round(): Promise<{ append: number; drain: number; megabytes: number }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'local-log-bench-'));
  const db = openEmbeddedDb(dir);
  try {
    const log = openMessageLog(db, PARTITIONS, 1_000_000);
    for (const topic of TOPICS) log.join(GROUP, topic);
    const value = { id: 'x', accountId: 'acct_000001', note: 'v'.repeat(400) };
    let n = 0;
    const turn = () => {
      const written: Promise<void>[] = [];
      for (let i = 0; i < PER_TOPIC_PER_TURN; i++) {
        for (const topic of TOPICS) written.push(log.appendGrouped(topic, [{ id: `m${n}`, key: `acct_${n++ % 977}`, value }]));
      }
      return Promise.all(written);
    };
    const appendStart = process.cpuUsage();
    for (let i = 0; i < TURNS; i++) await turn();
    const append = cpuMicros(appendStart) / n;

    const drainStart = process.cpuUsage();
    let read = 0;
    for (const topic of TOPICS) {
      for (let part = 0; part < PARTITIONS; part++) {
        for (;;) {
          const fetched = log.fetch(topic, part, log.committed(GROUP, topic, part), FETCH);
          if (fetched.length === 0) break;
          read += fetched.length;
          log.commitMany(GROUP, topic, new Map([[part, fetched[fetched.length - 1]!.seq + 1]]));
        }
      }
    }
    const drain = cpuMicros(drainStart) / read;
    if (read !== n) throw new Error(`read ${read} of ${n} messages`);
    return { append, drain, megabytes: statSync(path.join(dir, 'platform.db')).size / 1e6 };
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const results = [];
for (let i = 0; i < ROUNDS; i++) {
  const r = await round();
  results.push(r);
  console.log(`  round ${i + 1}: append ${r.append.toFixed(1)} µs, drain (fetch, commit, prune) ${r.drain.toFixed(1)} µs of CPU per message; file ${r.megabytes.toFixed(1)} MB`);
}
console.log(`local log (${root}): ${TURNS * PER_TOPIC_PER_TURN * TOPICS.length} messages a round, median of ${ROUNDS}: ` +
  `append ${median(results.map((r) => r.append)).toFixed(1)} µs, drain ${median(results.map((r) => r.drain)).toFixed(1)} µs of CPU per message`);
