import { MongoClient } from 'mongodb';
import { artifactVersion, BENCH_JVM, prepareJavaServer, SMALL_JVM, startJava, waitForOutput } from './java.ts';

/**
 * A MongoDB-wire server on loopback: mongo-java-server with its in-memory
 * backend (test/servers/mongo), started on a free port it picks itself. The
 * official driver talks to it unchanged; the address is handed out once a
 * `ping` is answered.
 */

export interface TestMongo {
  url: string;
  /** what runs, e.g. "mongo-java-server 1.47.0 (in-memory, announces MongoDB 4.4.0)" */
  version: string;
  stop(): Promise<void>;
  /** the server JVM's process id while it runs */
  pid(): number | undefined;
  /** the JVM's heap (-Xmx), in MB: every document and GridFS chunk is kept there */
  heapMb: number;
}

const START_TIMEOUT_MS = 60_000;

/**
 * `bench`: JVM flags for throughput rather than start-up time (BENCH_JVM).
 * `heapMb`: the JVM's heap (default 768). The backend keeps every document
 * and GridFS chunk in that heap, so a long run that stores audio needs more:
 * a full heap makes the JVM collect without end and drop connections.
 */
export async function startMongo(options: { bench?: boolean; heapMb?: number } = {}): Promise<TestMongo> {
  const server = prepareJavaServer('mongo');
  const heapMb = options.heapMb ?? 768;
  const proc = startJava(server, [...(options.bench ? BENCH_JVM : SMALL_JVM), `-Xmx${heapMb}m`, '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn'],
    'MongoWireServer', ['127.0.0.1', '0'], process.cwd());
  try {
    const [, address] = await waitForOutput(proc, /listening (\S+:\d+)/, START_TIMEOUT_MS);
    const url = `mongodb://${address}/?directConnection=true`;
    const client = new MongoClient(url, { serverSelectionTimeoutMS: START_TIMEOUT_MS });
    try {
      const info = await client.db('admin').command({ buildInfo: 1 });
      const version = `mongo-java-server ${artifactVersion(server, 'mongo-java-server')} (in-memory backend, announces MongoDB ${info.version})`;
      return {
        url, version, heapMb, stop: () => proc.stop(),
        pid: () => (proc.child.exitCode === null && proc.child.signalCode === null ? proc.child.pid : undefined),
      };
    } finally {
      await client.close();
    }
  } catch (error) {
    await proc.stop();
    throw error;
  }
}
