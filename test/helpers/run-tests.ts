import { spawn, spawnSync } from 'node:child_process';
import { startKafka } from './servers/kafka.ts';
import { startMongo } from './servers/mongo.ts';
import { javaToolsMissing } from './servers/java.ts';

/**
 * `npm test` runs ava through this wrapper so the Kafka and MongoDB adapter
 * contract suites run against real servers with nothing started by hand.
 * For each of KAFKA_BROKERS and MONGODB_URL that is unset, it starts the
 * server on loopback (testcontainers first when a Docker engine answers,
 * else the Maven-fetched Java servers in test/servers/), passes its address
 * to ava, prints one line naming the server and its version, and stops it
 * afterwards. A server that cannot be started makes its suites skip, and the
 * run FAIL unless ALLOW_SKIP=1.
 */

interface Started {
  value: string;
  version: string;
  stop(): Promise<unknown>;
}

interface Backbone {
  name: string;
  env: string;
  /** the Maven-fetched server in test/servers/ */
  local(): Promise<Started>;
  /** the same kind of server in a container */
  container(): Promise<Started>;
}

const BACKBONES: Backbone[] = [
  {
    name: 'Kafka',
    env: 'KAFKA_BROKERS',
    async local() {
      const kafka = await startKafka();
      return { value: kafka.brokers, version: `Apache Kafka ${kafka.version} (KRaft, single node, jars from Maven Central)`, stop: kafka.stop };
    },
    async container() {
      const { KafkaContainer } = await import('@testcontainers/kafka');
      const container = await new KafkaContainer('confluentinc/cp-kafka:7.6.1').withKraft().start();
      return { value: `${container.getHost()}:${container.getMappedPort(9093)}`, version: 'cp-kafka 7.6.1 (testcontainers)', stop: () => container.stop() };
    },
  },
  {
    name: 'MongoDB',
    env: 'MONGODB_URL',
    async local() {
      const mongo = await startMongo();
      return { value: mongo.url, version: mongo.version, stop: mongo.stop };
    },
    async container() {
      const { MongoDBContainer } = await import('@testcontainers/mongodb');
      const container = await new MongoDBContainer('mongo:7.0').start();
      return { value: `${container.getConnectionString()}?directConnection=true`, version: 'mongo 7.0 (testcontainers)', stop: () => container.stop() };
    },
  },
];

function dockerReachable(): boolean {
  const probe = spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], { timeout: 10_000, encoding: 'utf8' });
  return probe.status === 0 && probe.stdout.trim().length > 0;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

async function startBackbone(backbone: Backbone, docker: boolean): Promise<Started> {
  const problems: string[] = [];
  if (docker) {
    try {
      return await backbone.container();
    } catch (error) {
      problems.push(`testcontainers: ${(error as Error).message}`);
    }
  }
  const missing = javaToolsMissing();
  if (missing) problems.push(`local server: ${missing}`);
  else {
    try {
      return await backbone.local();
    } catch (error) {
      problems.push(`local server: ${(error as Error).message}`);
    }
  }
  throw new Error(problems.join('\n'));
}

const env = { ...process.env };
const allowSkip = env.ALLOW_SKIP === '1';
const stops: Array<() => Promise<unknown>> = [];
const skipped: string[] = [];
const wanted = BACKBONES.filter((b) => {
  if (!env[b.env]) return true;
  console.log(`${b.name}: using ${b.env}=${env[b.env]}`);
  return false;
});

const startedAt = Date.now();
const docker = wanted.length > 0 && dockerReachable();
const results = await Promise.allSettled(wanted.map(async (backbone) => {
  const began = Date.now();
  const started = await startBackbone(backbone, docker);
  return { started, ms: Date.now() - began };
}));
results.forEach((result, i) => {
  const backbone = wanted[i]!;
  if (result.status === 'fulfilled') {
    const { started, ms } = result.value;
    env[backbone.env] = started.value;
    stops.push(started.stop);
    console.log(`${backbone.name}: ${started.version} at ${started.value}, started in ${seconds(ms)}`);
  } else {
    skipped.push(backbone.name);
    console.log(`${backbone.name}: could not be started, its adapter contract suites skip:\n${(result.reason as Error).message}`);
  }
});
if (wanted.length > 0) console.log(`backbone servers ready in ${seconds(Date.now() - startedAt)}`);

const stopAll = () => Promise.allSettled(stops.splice(0).map((stop) => stop()));
const ava = spawn(process.execPath, ['node_modules/ava/entrypoints/cli.mjs', ...process.argv.slice(2)], { stdio: 'inherit', env });
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => ava.kill(signal));
}
let code: number = await new Promise((resolve) => ava.once('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
await stopAll();
if (skipped.length > 0) {
  if (allowSkip) {
    console.log(`ALLOW_SKIP=1: the ${skipped.join(' and ')} adapter contract suites were skipped`);
  } else {
    console.log(`FAIL: the ${skipped.join(' and ')} adapter contract suites were skipped (server not started); set ALLOW_SKIP=1 to accept that`);
    code = code || 1;
  }
}
process.exit(code);
