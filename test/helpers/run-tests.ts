import { spawn, spawnSync } from 'node:child_process';

/**
 * `npm test` runs ava through this wrapper so the Kafka and MongoDB contract
 * suites can run without a hand-started server: when KAFKA_BROKERS or
 * MONGODB_URL is unset and a Docker engine answers, it starts the server with
 * testcontainers and passes its address on. Without either, those suites
 * print one line saying why they skip.
 */
interface Service {
  name: string;
  env: string;
  start(): Promise<{ value: string; stop(): Promise<unknown> }>;
}

const SERVICES: Service[] = [
  {
    name: 'MongoDB',
    env: 'MONGODB_URL',
    async start() {
      const { MongoDBContainer } = await import('@testcontainers/mongodb');
      const container = await new MongoDBContainer('mongo:7.0').start();
      return { value: `${container.getConnectionString()}?directConnection=true`, stop: () => container.stop() };
    },
  },
  {
    name: 'Kafka',
    env: 'KAFKA_BROKERS',
    async start() {
      const { KafkaContainer } = await import('@testcontainers/kafka');
      const container = await new KafkaContainer('confluentinc/cp-kafka:7.6.1').withKraft().start();
      return { value: `${container.getHost()}:${container.getMappedPort(9093)}`, stop: () => container.stop() };
    },
  },
];

function dockerReachable(): boolean {
  const probe = spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], { timeout: 10_000, encoding: 'utf8' });
  return probe.status === 0 && probe.stdout.trim().length > 0;
}

const env = { ...process.env };
const stops: Array<() => Promise<unknown>> = [];
const docker = SERVICES.some((s) => !env[s.env]) ? dockerReachable() : false;
for (const service of SERVICES) {
  if (env[service.env]) {
    console.log(`${service.name}: using ${service.env}=${env[service.env]}`);
  } else if (!docker) {
    console.log(`${service.name}: ${service.env} is not set and no Docker engine answers for testcontainers; its adapter contract suites skip`);
  } else {
    try {
      const started = await service.start();
      env[service.env] = started.value;
      stops.push(started.stop);
      console.log(`${service.name}: started with testcontainers at ${started.value}`);
    } catch (err) {
      console.log(`${service.name}: testcontainers could not start it (${(err as Error).message}); its adapter contract suites skip`);
    }
  }
}

const ava = spawn(process.execPath, ['node_modules/ava/entrypoints/cli.mjs', ...process.argv.slice(2)], { stdio: 'inherit', env });
const code: number = await new Promise((resolve) => ava.once('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
await Promise.allSettled(stops.map((stop) => stop()));
process.exit(code);
