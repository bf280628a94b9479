/**
 * `npm run stack`: the distributed deployment on this machine, for trying it
 * out. Starts the servers the tests use (a Kafka broker, the MongoDB-wire
 * server, a private ClickHouse, Redis) and the roles as separate processes:
 * 2 API, 2 inference (one consumer group on tts.jobs), 1 pipelines. Prints
 * where everything listens (with every process's pid) and a working API key,
 * then runs until it is stopped: Ctrl-C, SIGINT, SIGTERM or SIGHUP (to this
 * process, to tsx, or to npm), or the end of the npm / tsx process that runs
 * it. The stop runs once: the roles first, then the servers (the data goes
 * with them).
 *
 * Settings: STACK_API_PORT (first API port, default 8080; the second is the
 * next one), STACK_APIS / STACK_INFERENCE / STACK_PIPELINES (process counts),
 * STACK_MONGO_HEAP_MB (heap of the in-memory MongoDB-wire server, default
 * 2048: it holds every job's audio), MONGODB_URL / REDIS_URL (use a server of
 * your own), STACK_LOGS=1 (echo every process's log lines; otherwise only
 * warnings and errors, from start-up on).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startBackboneServers, type BackboneServers } from './helpers/backbone.ts';
import { startTopology, type Topology } from './helpers/topology.ts';

const count = (name: string, fallback: number) => Math.max(1, Number(process.env[name] ?? fallback));
const firstPort = Number(process.env.STACK_API_PORT ?? 8080);
const apis = count('STACK_APIS', 2);
const mongoHeapMb = count('STACK_MONGO_HEAP_MB', 2048);
const echoAll = process.env.STACK_LOGS === '1';

// A terminal that went away (SIGHUP) or a reader that closed must not end the stop half way with an EIO / EPIPE.
process.stdout.on('error', () => {});
process.stderr.on('error', () => {});

let stopBegan = 0;
/** " (+1.2 s)" once the stop began, so its log shows what ended when */
const sinceStop = () => (stopBegan ? ` (+${((Date.now() - stopBegan) / 1000).toFixed(1)} s)` : '');

/** Echoes one role process's output, line by line: everything with STACK_LOGS=1, else warnings and errors. */
function echoer(name: string): (chunk: Buffer, stream: 'stdout' | 'stderr') => void {
  const prefix = `[${name}] `;
  const partial = { stdout: '', stderr: '' };
  return (chunk, stream) => {
    const lines = (partial[stream] + chunk.toString()).split('\n');
    partial[stream] = lines.pop()!;
    for (const line of lines) {
      if (echoAll || /"level":"(warn|error|WARN|ERROR)"/.test(line)) process.stdout.write(prefix + line + '\n');
    }
  };
}
const echoers = new Map<string, ReturnType<typeof echoer>>();
function echo(name: string, chunk: Buffer, stream: 'stdout' | 'stderr'): void {
  let write = echoers.get(name);
  if (!write) echoers.set(name, (write = echoer(name)));
  write(chunk, stream);
}

let servers: BackboneServers | undefined;
let topology: Topology | undefined;
let serversStarting: Promise<BackboneServers> | undefined;
let topologyStarting: Promise<Topology> | undefined;
let stopping: Promise<never> | undefined;

const alive = (pid: number | undefined): pid is number => {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** What is still starting when the stop comes: waited for (a minute at most), so that it is stopped too. */
async function settled<T>(starting: Promise<T> | undefined): Promise<T | undefined> {
  if (!starting) return undefined;
  let cancel = () => {};
  const gaveUp = new Promise<undefined>((resolve) => {
    const timer = setTimeout(() => resolve(undefined), 60_000);
    cancel = () => clearTimeout(timer);
  });
  try {
    return await Promise.race([starting.catch(() => undefined), gaveUp]);
  } finally {
    cancel();
  }
}

/**
 * Idempotent: a terminal's Ctrl-C reaches this process more than once (from
 * the terminal, and relayed by tsx), a watchdog below may fire as well, and
 * exiting on the second left servers running. The roles stop first (they
 * drain into Kafka, MongoDB and ClickHouse), then every server; whatever is
 * left when the process exits is killed by the helpers' exit handlers.
 */
function stop(code: number, why: string): Promise<never> {
  stopping ??= (async () => {
    stopBegan = Date.now();
    console.log(`\n${why}: stopping the processes, then the servers...`);
    topology ??= await settled(topologyStarting);
    servers ??= await settled(serversStarting);
    await topology?.stop();
    const running = (servers?.processes() ?? []).filter((server) => alive(server.pid));
    console.log(`processes stopped${sinceStop()}; servers still running: ${running.map((s) => `${s.name} (pid ${s.pid})`).join(', ') || 'none'}`);
    await servers?.stop();
    console.log(`servers stopped${sinceStop()}`);
    process.exit(code);
  })();
  return stopping;
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stop(0, signal));

/*
 * `npm run stack` runs npm → tsx → this process (the script `exec`s tsx, so
 * no shell sits between them to swallow npm's SIGINT or die of its SIGTERM
 * and leave the stack running with no parent). Signals reach this process
 * through tsx. Should a launcher end without one (npm killed outright), this
 * process notices within half a second and stops as on Ctrl-C: it watches
 * the processes that launched it, up to npm, by pid and start time (Linux's
 * /proc; elsewhere its parent only).
 */
interface Launcher {
  pid: number;
  /** start time in clock ticks since boot: a pid reused by another process differs */
  start: string;
  cmd: string[];
}

function procStat(pid: number): { ppid: number; state: string; start: string; cmd: string[] } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    return { state: fields[0]!, ppid: Number(fields[1]), start: fields[19]!, cmd };
  } catch {
    return null;
  }
}

const base = (arg: string | undefined) => (arg ? path.basename(arg) : '');
/** npm (whose title becomes "npm run stack"), npx, pnpm or yarn */
const isPackageManager = (cmd: string[]) =>
  /^(npm|npx|pnpm|yarn)( |$)/.test(cmd[0] ?? '') ||
  [base(cmd[0]), base(cmd[1])].some((name) => /^(npm|npx|pnpm|yarn)(-cli)?(\.c?js)?$/.test(name));

/** The processes that launched this one, from its parent up to npm (or just its parent when npm did not launch it). */
function launchers(): Launcher[] {
  const chain: Launcher[] = [];
  for (let pid = process.ppid; pid > 1 && chain.length < 8; ) {
    const info = procStat(pid);
    if (!info) break;
    chain.push({ pid, start: info.start, cmd: info.cmd });
    if (isPackageManager(info.cmd)) return chain;
    pid = info.ppid;
  }
  return chain.slice(0, 1);
}

function watchLaunchers(): void {
  const intervalMs = 500;
  if (process.platform !== 'linux' || procStat(process.pid) === null) {
    const parent = process.ppid;
    setInterval(() => alive(parent) || void stop(0, `its parent process (pid ${parent}) ended`), intervalMs).unref();
    return;
  }
  const chain = launchers();
  setInterval(() => {
    if (stopping) return;
    for (const launcher of chain) {
      const info = procStat(launcher.pid);
      if (!info || info.start !== launcher.start || info.state === 'Z' || info.state === 'X') {
        void stop(0, `${base(launcher.cmd[0]) || 'process'} (pid ${launcher.pid}), which launched the stack, ended`);
        return;
      }
    }
  }, intervalMs).unref();
}
watchLaunchers();

try {
  const began = Date.now();
  console.log('starting Kafka, MongoDB (wire server), ClickHouse and Redis...');
  serversStarting = startBackboneServers({
    mongoUrl: process.env.MONGODB_URL, redisUrl: process.env.REDIS_URL, name: `stack_${Date.now()}`, mongoHeapMb,
  });
  servers = await serversStarting;
  if (stopping) await stopping;
  for (const line of servers.describe()) console.log(`  ${line}`);
  console.log(`starting ${apis} API, ${count('STACK_INFERENCE', 2)} inference and ${count('STACK_PIPELINES', 1)} pipelines processes...`);
  topologyStarting = startTopology({
    servers,
    apis,
    inference: count('STACK_INFERENCE', 2),
    pipelines: count('STACK_PIPELINES', 1),
    apiPorts: Array.from({ length: apis }, (_, i) => firstPort + i),
    env: { LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' },
    // From the first byte: warnings at start-up (configuration checks, test-only switches) are echoed too.
    onOutput: echo,
  });
  topology = await topologyStarting;
  for (const proc of topology.all()) void proc.child.exited.then((code) => process.stdout.write(`[${proc.name}] exited (${code})${sinceStop()}\n`));
  if (stopping) await stopping;
  const account = await topology.bootstrap('Stack', 1_000_000);
  if (stopping) await stopping;
  console.log(`\nready in ${((Date.now() - began) / 1000).toFixed(1)} s:`);
  for (const proc of topology.all()) {
    const where = proc.url ? `API ${proc.url}/api/v1` : proc.inferenceUrl ? `synthesis endpoint ${proc.inferenceUrl}` : 'consumers only';
    console.log(`  ${proc.name.padEnd(12)} pid ${String(proc.child.child.pid).padEnd(7)} ${where}; probes and metrics ${proc.opsUrl}`);
  }
  for (const server of servers.processes()) console.log(`  ${server.name.padEnd(12)} pid ${String(server.pid).padEnd(7)} ${server.where}`);
  console.log(`\nadmin token: ${topology.adminToken}`);
  console.log(`an account with 1,000,000 tokens: ${JSON.stringify(account)}`);
  console.log(`\ntry:\n  curl -s ${topology.apis[0]!.url}/api/v1/audio/speech -H "Authorization: Bearer ${account.apiKey}" \\
    -H "Content-Type: application/json" -d '{"input":"Xin chào, đây là chế độ phân tán.","voice":"vi-north-female-mai"}' -o hello.mp3`);
  console.log('\nCtrl-C (or SIGINT / SIGTERM / SIGHUP to npm, tsx or this process) stops everything.');
} catch (error) {
  if (stopping) await stopping;
  console.error(`the stack did not start: ${(error as Error).stack ?? error}`);
  await stop(1, 'start-up failed');
}
