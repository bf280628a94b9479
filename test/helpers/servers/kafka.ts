import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { artifactVersion, BENCH_JVM, freePort, prepareJavaServer, SMALL_JVM, startJava, tail, waitForOutput, type JavaProcess, type JavaServer } from './java.ts';

/**
 * A real single-node Apache Kafka broker in KRaft mode (no ZooKeeper) on
 * loopback, from the jars test/servers/kafka/pom.xml names: one JVM
 * (test/servers/kafka/KafkaBroker.java) formats its storage in a fresh temp
 * folder and runs the broker on free ports; the address is handed out once a
 * client's metadata and group requests are answered. halt() and resume()
 * stop and start the same broker (same cluster id, log directory and ports),
 * for tests of a broker restart under traffic.
 */

export interface TestKafka {
  brokers: string;
  version: string;
  /** stops the broker and removes its log directory */
  stop(): Promise<void>;
  /**
   * Stops the broker the way a node goes down for maintenance (a clean
   * shutdown, SIGKILL after `graceMs`), keeping its log directory and ports.
   */
  halt(graceMs?: number): Promise<void>;
  /** Starts the same broker again: same cluster id, log directory and ports; resolves once it answers clients. */
  resume(): Promise<void>;
  /** the broker JVM's process id while it runs (benchmarks read its CPU time) */
  pid(): number | undefined;
}

const START_TIMEOUT_MS = 90_000;

/** The settings a single node needs: every internal topic with one replica, rebalances without the initial delay. */
function serverProperties(dir: string, port: number, controllerPort: number): string {
  return `${[
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
    `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
    'controller.listener.names=CONTROLLER',
    'inter.broker.listener.name=PLAINTEXT',
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    `log.dirs=${path.join(dir, 'data')}`,
    'num.partitions=1',
    'offsets.topic.replication.factor=1',
    'offsets.topic.num.partitions=1',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'transaction.state.log.num.partitions=1',
    'share.coordinator.state.topic.replication.factor=1',
    'share.coordinator.state.topic.min.isr=1',
    'share.coordinator.state.topic.num.partitions=1',
    'group.initial.rebalance.delay.ms=0',
    // The bus adapter creates its topics (and their .dlq) itself; this proves it does not rely on the broker for that.
    'auto.create.topics.enable=false',
    'num.network.threads=2',
    'num.io.threads=4',
    'num.recovery.threads.per.data.dir=1',
  ].join('\n')}\n`;
}

/**
 * A KRaft cluster id: 16 random bytes in URL-safe base64 without padding, as `kafka-storage random-uuid` prints.
 * One that starts with '-' would be read by kafka-storage's argument parser as an option (1 in 64), so none does.
 */
function clusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

/**
 * Whether the broker answers metadata requests and its group coordinator has
 * loaded the (single-partition) offsets topic; before that every consumer
 * joining a group is turned away with COORDINATOR_LOAD_IN_PROGRESS.
 */
async function answers(brokers: string): Promise<boolean> {
  const admin = new Kafka({ clientId: 'test-kafka-probe', brokers: [brokers], logLevel: logLevel.NOTHING, retry: { retries: 0 } }).admin();
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    if (cluster.controller === null || cluster.brokers.length === 0) return false;
    await admin.describeGroups(['test-kafka-probe']);
    return true;
  } catch {
    return false;
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

/** `bench`: JVM flags for throughput rather than start-up time (BENCH_JVM). */
export async function startKafka(options: { bench?: boolean } = {}): Promise<TestKafka> {
  const server: JavaServer = prepareJavaServer('kafka');
  const version = artifactVersion(server, 'kafka_2.13');
  const dir = mkdtempSync(path.join(tmpdir(), 'test-kafka-'));
  const cluster = clusterId();
  let broker: JavaProcess | null = null;
  let brokers = '';
  const halt = async (graceMs = 10_000) => {
    const running = broker;
    broker = null;
    await running?.stop(graceMs);
  };
  const destroy = async () => {
    await halt();
    rmSync(dir, { recursive: true, force: true });
  };

  /** Runs the broker on the properties in `dir` (formatting the storage the first time only) until clients get answers. */
  async function run(): Promise<void> {
    if (broker) throw new Error('the test broker is already running');
    const jvm = [
      ...(options.bench ? BENCH_JVM : SMALL_JVM), '-Xmx512m', `-Dkafka.logs.dir=${dir}`,
      '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn', '-Dorg.slf4j.simpleLogger.log.kafka.server.KafkaRaftServer=info',
    ];
    const proc = startJava(server, jvm, 'KafkaBroker', [path.join(dir, 'server.properties'), cluster], dir);
    broker = proc;
    await waitForOutput(proc, /Kafka Server started/, START_TIMEOUT_MS);
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (!(await answers(brokers))) {
      if (proc.child.exitCode !== null) throw new Error(`the broker exited:\n${tail(proc.output())}`);
      if (Date.now() > deadline) throw new Error(`the broker does not answer metadata and group requests:\n${tail(proc.output())}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  try {
    const [port, controllerPort] = [await freePort(), await freePort()];
    writeFileSync(path.join(dir, 'server.properties'), serverProperties(dir, port, controllerPort));
    brokers = `127.0.0.1:${port}`;
    await run();
    return {
      brokers,
      version,
      stop: destroy,
      halt,
      pid: () => broker?.child.pid,
      async resume() {
        try {
          await run();
        } catch (error) {
          await halt(2000);
          throw error;
        }
      },
    };
  } catch (error) {
    await destroy();
    throw error;
  }
}
