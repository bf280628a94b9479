import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Java servers for the tests, fetched by Maven. Each folder under
 * test/servers/ holds a pom.xml naming the server's artifacts and a small
 * Java main. Maven resolves the artifacts from Maven Central into ~/.m2 (once
 * per machine) and prints their classpath; the classpath and the compiled
 * main are kept in the folder's target/ until the pom or the source changes,
 * so a warm start runs no Maven at all.
 */

export const SERVERS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../servers');

/** Pinned so Maven never looks up plugin metadata online once ~/.m2 has it. */
const DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.11.0';
const MAVEN_TIMEOUT_MS = 10 * 60_000;

export interface JavaServer {
  /** jars of the server, in classpath order */
  classpath: string[];
  /** folder with the compiled main class */
  classes: string;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

function run(command: string, args: string[], cwd: string, timeout: number): void {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', timeout });
  if (result.error) throw new Error(`${command} could not run: ${result.error.message}`);
  if (result.status !== 0) {
    const output = `${result.stdout}${result.stderr}`.trim().split('\n').slice(-15).join('\n');
    throw new Error(`${command} ${args.join(' ')} exited with ${result.status}:\n${output}`);
  }
}

/** The classpath of `<dir>/pom.xml`, from the cache when the pom is unchanged and every jar is still in ~/.m2. */
function resolveClasspath(dir: string, target: string): string[] {
  const pom = readFileSync(path.join(dir, 'pom.xml'), 'utf8');
  const cacheFile = path.join(target, 'classpath.txt');
  const stamp = `pom ${sha256(pom)}`;
  if (existsSync(cacheFile)) {
    const [first, ...jars] = readFileSync(cacheFile, 'utf8').split('\n').filter(Boolean);
    if (first === stamp && jars.length > 0 && jars.every((jar) => existsSync(jar))) return jars;
  }
  const out = path.join(target, 'classpath.maven.txt');
  run('mvn', ['-q', '-B', `${DEPENDENCY_PLUGIN}:build-classpath`, `-Dmdep.outputFile=${out}`, '-Dmdep.includeScope=runtime'], dir, MAVEN_TIMEOUT_MS);
  const jars = readFileSync(out, 'utf8').trim().split(path.delimiter).filter(Boolean);
  writeFileSync(cacheFile, [stamp, ...jars, ''].join('\n'));
  return jars;
}

/** Compiles the folder's *.java into target/classes when a source is newer than its stamp. */
function compileMains(dir: string, target: string, classpath: string[]): string {
  const classes = path.join(target, 'classes');
  const sources = readdirSync(dir).filter((name) => name.endsWith('.java')).map((name) => path.join(dir, name));
  const stampFile = path.join(classes, '.sources');
  const stamp = sha256(sources.map((file) => `${file}\n${readFileSync(file, 'utf8')}`).join('\n') + classpath.join(path.delimiter));
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) return classes;
  mkdirSync(classes, { recursive: true });
  run('javac', ['-nowarn', '-cp', classpath.join(path.delimiter), '-d', classes, ...sources], dir, 120_000);
  writeFileSync(stampFile, stamp);
  return classes;
}

/** Resolves (and on a clean machine downloads) the server in test/servers/<name>. */
export function prepareJavaServer(name: string): JavaServer {
  const dir = path.join(SERVERS_DIR, name);
  const target = path.join(dir, 'target');
  mkdirSync(target, { recursive: true });
  const classpath = resolveClasspath(dir, target);
  return { classpath, classes: compileMains(dir, target, classpath) };
}

/** Version of `artifact` from its jar name on the classpath (e.g. kafka_2.13-4.4.0.jar). */
export function artifactVersion(server: JavaServer, artifact: string): string {
  for (const jar of server.classpath) {
    const match = new RegExp(`^${artifact.replace(/[.]/g, '\\.')}-(\\d[^/]*)\\.jar$`).exec(path.basename(jar));
    if (match) return match[1]!;
  }
  return 'unknown';
}

/** Whether `java` and `mvn` can run here; null when they can, else why not. */
export function javaToolsMissing(): string | null {
  for (const tool of ['java', 'javac', 'mvn']) {
    const probe = spawnSync(tool, ['-version'], { encoding: 'utf8', timeout: 30_000 });
    if (probe.error || probe.status !== 0) return `${tool} is not installed`;
  }
  return null;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface JavaProcess {
  child: ChildProcess;
  /** everything the process printed, for failure messages */
  output(): string;
  /** closes its standard input (the mains exit on that), then SIGKILL after `graceMs` */
  stop(graceMs?: number): Promise<void>;
}

const running = new Set<ChildProcess>();
// The mains also exit when their standard input closes; this covers a runner that exits normally first.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** JVM flags for a small, quick-starting test server. */
export const SMALL_JVM = ['-Xms64m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-Xshare:auto', '-Djava.awt.headless=true'];

/**
 * JVM flags for a test server that benchmarks measure: the optimising JIT
 * compiler stays on (SMALL_JVM stops at the quick first tier, which starts
 * sooner but runs the server several times slower once it is busy).
 */
export const BENCH_JVM = ['-Xms256m', '-XX:+UseParallelGC', '-Xshare:auto', '-Djava.awt.headless=true'];

export function startJava(server: JavaServer, jvmArgs: string[], main: string, args: string[], cwd: string): JavaProcess {
  const cp = [server.classes, ...server.classpath].join(path.delimiter);
  // Its own process group: Ctrl-C in a terminal signals the whole foreground group, and a broker that died at once
  // left `npm run stack`'s roles to drain against it (a burst of kafkajs connection errors). Its owner stops it, after
  // the processes that use it; should the owner die, the main exits as its standard input closes.
  const child = spawn('java', [...jvmArgs, '-cp', cp, main, ...args], { cwd, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  running.add(child);
  let out = '';
  const keep = (chunk: Buffer) => {
    out += chunk.toString();
    if (out.length > 200_000) out = out.slice(-100_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  child.stdin!.on('error', () => {});
  const exited = new Promise<void>((resolve) => child.once('exit', () => {
    running.delete(child);
    resolve();
  }));
  return {
    child,
    output: () => out,
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.stdin!.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Resolves with the first match of `pattern` in the process output; rejects if it exits or the time runs out. */
export function waitForOutput(proc: JavaProcess, pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = pattern.exec(proc.output());
      if (match) {
        done();
        resolve(match);
      }
    };
    const onExit = (code: number | null) => {
      done();
      reject(new Error(`exited with ${code} before it was ready:\n${tail(proc.output())}`));
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`not ready after ${timeoutMs} ms:\n${tail(proc.output())}`));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      proc.child.stdout!.off('data', check);
      proc.child.stderr!.off('data', check);
      proc.child.off('exit', onExit);
    };
    proc.child.stdout!.on('data', check);
    proc.child.stderr!.on('data', check);
    proc.child.once('exit', onExit);
    check();
  });
}

export const tail = (text: string, lines = 20) => text.trim().split('\n').slice(-lines).join('\n');

