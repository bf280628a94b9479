import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { MongoClient } from 'mongodb';
import { startKafka, type TestKafka } from './servers/kafka.ts';
import { startMongo } from './servers/mongo.ts';
import { freePort, javaToolsMissing } from './servers/java.ts';
import { findClickHouseServer, startPrivateClickHouse, type PrivateClickHouse } from './private-clickhouse.ts';
import { tether } from './tether.ts';

/**
 * The four servers of the distributed mode, started for one topology: a
 * Kafka broker and a ClickHouse server of its own (so a test may stop and
 * restart them), the MongoDB-wire server `npm test` runs (or one of its
 * own) with a fresh database, and Redis (the one on 127.0.0.1:6379 when it
 * answers, else a private redis-server). Each is stopped by stop().
 */

/** A server this machine cannot run at all (no Java, no clickhouse-server, no Redis): the caller skips, saying why. */
export class ServerUnavailable extends Error {}

export interface BackboneServers {
  kafka: TestKafka;
  mongo: { url: string; db: string; version: string };
  clickhouse: PrivateClickHouse & { database: string };
  redis: { url: string; version: string };
  /** one line per server: what runs where */
  describe(): string[];
  /** the server processes started here (not a MONGODB_URL / REDIS_URL server, nor the shared Redis), with their pids while they run */
  processes(): Array<{ name: string; pid: number | undefined; where: string }>;
  stop(): Promise<void>;
}

export interface BackboneOptions {
  /** a MongoDB (or MongoDB-wire) server to use instead of starting one */
  mongoUrl?: string;
  /** a Redis to use instead of 127.0.0.1:6379 or a private one */
  redisUrl?: string;
  /** names the database and ClickHouse database (default: pid and time) */
  name?: string;
  /** heap of the MongoDB-wire server started here, in MB (default: startMongo's); it keeps every document and GridFS chunk */
  mongoHeapMb?: number;
}

async function redisAnswers(url: string): Promise<string | null> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 2000, retryStrategy: () => null });
  // A refused probe is an answer (null), not an "Unhandled error event" printed by ioredis.
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    const info = await redis.info('server');
    return /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
  } catch {
    return null;
  } finally {
    redis.disconnect();
  }
}

async function startRedis(url: string | undefined): Promise<{ url: string; version: string; pid: (() => number | undefined) | null; stop(): Promise<void> }> {
  const shared = url ?? 'redis://127.0.0.1:6379';
  const version = await redisAnswers(shared);
  if (version) return { url: shared, version: `Redis ${version} at ${shared}`, pid: null, stop: async () => {} };
  if (url) throw new Error(`REDIS_URL=${url} does not answer`);
  const port = await freePort();
  let child: ChildProcess;
  let untethered = Promise.resolve();
  try {
    // Its own process group (a terminal's Ctrl-C must not end it under the draining roles), tied to this process.
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore', detached: true });
    await new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () => resolve());
    });
    untethered = tether(child, 5000);
  } catch (error) {
    throw new ServerUnavailable(`no Redis on 127.0.0.1:6379 and redis-server cannot run: ${(error as Error).message}`);
  }
  const own = `redis://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    await untethered;
  };
  for (let i = 0; i < 100; i++) {
    const ownVersion = await redisAnswers(own);
    const pid = () => (child.exitCode === null && child.signalCode === null ? child.pid : undefined);
    if (ownVersion) return { url: own, version: `Redis ${ownVersion} (private redis-server) at ${own}`, pid, stop };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stop();
  throw new Error(`the private redis-server on ${own} does not answer`);
}

async function dropDatabase(url: string, name: string): Promise<void> {
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 5000 });
  try {
    await client.db(name).dropDatabase();
  } finally {
    await client.close();
  }
}

export async function startBackboneServers(options: BackboneOptions = {}): Promise<BackboneServers> {
  const missingJava = javaToolsMissing();
  if (missingJava) throw new ServerUnavailable(`the Kafka test broker needs Java and Maven: ${missingJava}`);
  if (!findClickHouseServer()) throw new ServerUnavailable('no clickhouse-server binary on this machine (apt-get install clickhouse-server)');
  const name = options.name ?? `topology_${process.pid}_${Date.now()}`;
  const stops: Array<() => Promise<unknown>> = [];
  const stopAll = async () => {
    await Promise.allSettled(stops.splice(0).reverse().map((stop) => stop()));
  };
  const track = <T extends { stop?: () => Promise<unknown>; destroy?: () => Promise<unknown> }>(server: T): T => {
    stops.push(() => (server.destroy ? server.destroy() : server.stop!()));
    return server;
  };
  const started = await Promise.allSettled([
    startKafka().then(track),
    startPrivateClickHouse({ startTimeoutMs: 60_000 }).then(track),
    options.mongoUrl ? Promise.resolve(null) : startMongo({ heapMb: options.mongoHeapMb }).then(track),
    startRedis(options.redisUrl).then(track),
  ]);
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await stopAll();
    throw failed.reason;
  }
  const [kafka, clickhouse, mongo, redis] = started.map((r) => (r as PromiseFulfilledResult<unknown>).value) as [
    TestKafka, PrivateClickHouse, Awaited<ReturnType<typeof startMongo>> | null, Awaited<ReturnType<typeof startRedis>>,
  ];
  const mongoUrl = options.mongoUrl ?? mongo!.url;
  // On a server shared with other suites, the topology's database goes when it does.
  if (options.mongoUrl) stops.unshift(() => dropDatabase(mongoUrl, name));
  const servers: BackboneServers = {
    kafka,
    mongo: { url: mongoUrl, db: name, version: mongo ? mongo.version : `the server at ${mongoUrl}` },
    clickhouse: Object.assign(clickhouse, { database: name }),
    redis: { url: redis.url, version: redis.version },
    describe: () => [
      `Kafka: Apache Kafka ${kafka.version} (KRaft, single node) at ${kafka.brokers}`,
      `MongoDB: ${servers.mongo.version}${mongo ? `, heap ${mongo.heapMb} MB` : ''}, database ${name}`,
      `ClickHouse: private clickhouse-server at ${clickhouse.url}, database ${name}`,
      `Redis: ${redis.version}`,
    ],
    processes: () => [
      { name: 'Kafka', pid: kafka.pid(), where: kafka.brokers },
      ...(mongo ? [{ name: 'MongoDB-wire', pid: mongo.pid(), where: mongo.url }] : []),
      { name: 'ClickHouse', pid: clickhouse.pid(), where: clickhouse.url },
      ...(redis.pid ? [{ name: 'redis-server', pid: redis.pid(), where: redis.url }] : []),
    ],
    stop: stopAll,
  };
  return servers;
}
