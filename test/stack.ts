/**
 * `npm run stack`: the distributed deployment on this machine, for trying it
 * out. Starts the servers the tests use (a Kafka broker, the MongoDB-wire
 * server, a private ClickHouse, Redis) and the roles as separate processes:
 * 2 API, 2 inference (one consumer group on tts.jobs), 1 pipelines. Prints
 * where everything listens and a working API key, then runs until Ctrl-C,
 * which stops every process and server (the data goes with them).
 *
 * Settings: STACK_API_PORT (first API port, default 8080; the second is the
 * next one), STACK_APIS / STACK_INFERENCE / STACK_PIPELINES (process counts),
 * MONGODB_URL / REDIS_URL (use a server of your own), STACK_LOGS=1 (echo every
 * process's log lines; otherwise only warnings and errors).
 */
import { startBackboneServers, type BackboneServers } from './helpers/backbone.ts';
import { startTopology, type RoleProcess, type Topology } from './helpers/topology.ts';

const count = (name: string, fallback: number) => Math.max(1, Number(process.env[name] ?? fallback));
const firstPort = Number(process.env.STACK_API_PORT ?? 8080);
const apis = count('STACK_APIS', 2);
const echoAll = process.env.STACK_LOGS === '1';

function echo(proc: RoleProcess): void {
  const prefix = `[${proc.name}] `;
  let partial = '';
  const onData = (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      if (echoAll || /"level":"(warn|error|WARN|ERROR)"/.test(line)) process.stdout.write(prefix + line + '\n');
    }
  };
  proc.child.child.stdout!.on('data', onData);
  proc.child.child.stderr!.on('data', onData);
  void proc.child.exited.then((code) => process.stdout.write(`${prefix}exited (${code})\n`));
}

let servers: BackboneServers | undefined;
let topology: Topology | undefined;
let stopping: Promise<never> | undefined;
/** Idempotent: Ctrl-C reaches this process twice (from the terminal, and relayed by npm and tsx), and exiting on the second left servers running. */
function stop(code: number): Promise<never> {
  stopping ??= (async () => {
    console.log('\nstopping the processes and servers...');
    await topology?.stop();
    await servers?.stop();
    process.exit(code);
  })();
  return stopping;
}
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));

try {
  const began = Date.now();
  console.log('starting Kafka, MongoDB (wire server), ClickHouse and Redis...');
  servers = await startBackboneServers({ mongoUrl: process.env.MONGODB_URL, redisUrl: process.env.REDIS_URL, name: `stack_${Date.now()}` });
  for (const line of servers.describe()) console.log(`  ${line}`);
  console.log(`starting ${apis} API, ${count('STACK_INFERENCE', 2)} inference and ${count('STACK_PIPELINES', 1)} pipelines processes...`);
  topology = await startTopology({
    servers,
    apis,
    inference: count('STACK_INFERENCE', 2),
    pipelines: count('STACK_PIPELINES', 1),
    apiPorts: Array.from({ length: apis }, (_, i) => firstPort + i),
    env: { LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' },
  });
  for (const proc of topology.all()) echo(proc);
  const account = await topology.bootstrap('Stack', 1_000_000);
  console.log(`\nready in ${((Date.now() - began) / 1000).toFixed(1)} s:`);
  for (const proc of topology.all()) {
    const where = proc.url ? `API ${proc.url}/api/v1` : proc.inferenceUrl ? `synthesis endpoint ${proc.inferenceUrl}` : 'consumers only';
    console.log(`  ${proc.name.padEnd(12)} pid ${String(proc.child.child.pid).padEnd(7)} ${where}; probes and metrics ${proc.opsUrl}`);
  }
  console.log(`\nadmin token: ${topology.adminToken}`);
  console.log(`an account with 1,000,000 tokens: ${JSON.stringify(account)}`);
  console.log(`\ntry:\n  curl -s ${topology.apis[0]!.url}/api/v1/audio/speech -H "Authorization: Bearer ${account.apiKey}" \\
    -H "Content-Type: application/json" -d '{"input":"Xin chào, đây là chế độ phân tán.","voice":"vi-north-female-mai"}' -o hello.mp3`);
  console.log('\nCtrl-C stops everything.');
} catch (error) {
  console.error(`the stack did not start: ${(error as Error).stack ?? error}`);
  await stop(1);
}
