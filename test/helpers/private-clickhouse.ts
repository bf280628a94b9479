import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, chownSync, constants, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { tether } from './tether.ts';

/**
 * A private clickhouse-server for one test: its own temp directory and
 * ports, so a test may stop and start it mid-traffic without touching the
 * shared server on 8123 that other suites use. stop() and start() reuse the
 * same directory and ports, so tables and data survive a restart exactly as
 * they would for a production server.
 */

export interface PrivateClickHouse {
  url: string;
  httpPort: number;
  tcpPort: number;
  dir: string;
  /** SIGTERM and wait for the process to exit (SIGKILL after `graceMs`) */
  stop(graceMs?: number): Promise<void>;
  /** start again on the same directory and ports; waits for /ping */
  start(): Promise<void>;
  /** stop and remove the directory */
  destroy(): Promise<void>;
  /** the last lines of the server's error log, for failure messages */
  errorLog(lines?: number): string;
  /** the server's process id while it runs */
  pid(): number | undefined;
}

const SEARCH_PATH = ['/usr/bin', '/usr/sbin', '/usr/local/bin', '/usr/local/sbin'];

/** The clickhouse-server binary, or null when this machine has none. */
export function findClickHouseServer(): string | null {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), ...SEARCH_PATH];
  for (const dir of dirs) {
    const candidate = path.join(dir, 'clickhouse-server');
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return realpathSync(candidate);
    } catch {
      // not in this directory
    }
  }
  return null;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

// A test process that dies without destroy() must not leave servers behind holding ports.
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const proc of running) proc.kill('SIGKILL');
});

const xml = (value: string) => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function configXml(dir: string, httpPort: number, tcpPort: number): string {
  const at = (sub: string) => xml(path.join(dir, sub) + '/');
  // Only what a single-node test server needs; the packaged defaults would
  // also open interserver and MySQL ports that could collide between tests.
  return `<?xml version="1.0"?>
<yandex>
  <logger>
    <level>information</level>
    <log>${xml(path.join(dir, 'log', 'server.log'))}</log>
    <errorlog>${xml(path.join(dir, 'log', 'server.err.log'))}</errorlog>
    <size>10M</size>
    <count>1</count>
  </logger>
  <http_port>${httpPort}</http_port>
  <tcp_port>${tcpPort}</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>${at('data')}</path>
  <tmp_path>${at('tmp')}</tmp_path>
  <user_files_path>${at('user_files')}</user_files_path>
  <format_schema_path>${at('format_schemas')}</format_schema_path>
  <users_config>users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>268435456</mark_cache_size>
  <max_concurrent_queries>100</max_concurrent_queries>
  <!-- Clients' idle keep-alive connections hold a stopping server for this long (default 5 s); tests stop it often. -->
  <shutdown_wait_unfinished>1</shutdown_wait_unfinished>
  <keep_alive_timeout>3</keep_alive_timeout>
</yandex>
`;
}

const USERS_XML = `<?xml version="1.0"?>
<yandex>
  <profiles><default/></profiles>
  <users>
    <default>
      <password></password>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
  </users>
  <quotas><default/></quotas>
</yandex>
`;

/** One /ping on a connection of its own: a pooled keep-alive socket would hold up the server's shutdown. */
function pingOk(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get(`${url}/ping`, { agent: false, timeout: 1000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve(res.statusCode === 200 && body.trim() === 'Ok.'));
      res.on('error', () => resolve(false));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

function chownTree(dir: string, uid: number, gid: number): void {
  chownSync(dir, uid, gid);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) chownTree(full, uid, gid);
    else chownSync(full, uid, gid);
  }
}

/** uid and gid of the `clickhouse` system user, when there is one. */
function clickhouseUser(): { uid: number; gid: number } | null {
  try {
    const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('clickhouse:'));
    if (!line) return null;
    const [, , uid, gid] = line.split(':');
    return { uid: Number(uid), gid: Number(gid) };
  } catch {
    return null;
  }
}

export async function startPrivateClickHouse(options: { startTimeoutMs?: number } = {}): Promise<PrivateClickHouse> {
  const binary = findClickHouseServer();
  if (!binary) throw new Error('clickhouse-server is not installed');
  const startTimeoutMs = options.startTimeoutMs ?? 30_000;
  const dir = mkdtempSync(path.join(tmpdir(), 'private-clickhouse-'));
  for (const sub of ['data', 'tmp', 'user_files', 'format_schemas', 'log']) mkdirSync(path.join(dir, sub));
  const httpPort = await freePort();
  let tcpPort = await freePort();
  while (tcpPort === httpPort) tcpPort = await freePort();
  const configFile = path.join(dir, 'config.xml');
  writeFileSync(configFile, configXml(dir, httpPort, tcpPort));
  writeFileSync(path.join(dir, 'users.xml'), USERS_XML);
  const url = `http://127.0.0.1:${httpPort}`;

  // Recent releases refuse to run as root over data owned by someone else,
  // and some builds refuse root outright; 18.16 runs as root. Start as the
  // current user and switch to `clickhouse` only if that is refused.
  let asUser: { uid: number; gid: number } | null = null;
  let child: ChildProcess | null = null;
  let exited: Promise<number | null> = Promise.resolve(null);
  let output = '';

  function spawnServer(): void {
    const args = [`--config-file=${configFile}`];
    // setpriv execs the server itself, so our SIGTERM reaches it directly (runuser would stay in between).
    const [command, argv] = asUser
      ? ['setpriv', [`--reuid=${asUser.uid}`, `--regid=${asUser.gid}`, '--clear-groups', binary!, ...args]]
      : [binary!, args];
    output = '';
    // Its own process group, as the Java servers: a terminal's Ctrl-C signals the whole foreground group, and a
    // ClickHouse that died at once left `npm run stack`'s pipelines process draining usage into nothing. Its owner
    // stops it after the processes that use it; should the owner die, the tether stops it.
    const proc = spawn(command, argv as string[], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const untethered = tether(proc, 10_000);
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4000);
    };
    proc.stdout!.on('data', keep);
    proc.stderr!.on('data', keep);
    running.add(proc);
    exited = new Promise<number | null>((resolve) => proc.once('exit', (code, signal) => {
      running.delete(proc);
      resolve(code ?? (signal ? -1 : null));
    })).then(async (code) => {
      await untethered;
      return code;
    });
    child = proc;
  }

  async function waitReady(): Promise<'ready' | 'exited'> {
    const deadline = Date.now() + startTimeoutMs;
    let gone = false;
    void exited.then(() => {
      gone = true;
    });
    while (Date.now() < deadline) {
      if (await pingOk(url)) return 'ready';
      if (gone) return 'exited';
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`private clickhouse on ${url} did not answer /ping within ${startTimeoutMs} ms\n${tail()}`);
  }

  function tail(lines = 20): string {
    let log = '';
    try {
      log = readFileSync(path.join(dir, 'log', 'server.err.log'), 'utf8');
    } catch {
      // no error log yet
    }
    return [output, log].join('\n').split('\n').filter(Boolean).slice(-lines).join('\n');
  }

  async function start(): Promise<void> {
    if (child) throw new Error('private clickhouse: already running');
    spawnServer();
    if ((await waitReady()) === 'ready') return;
    child = null;
    const user = clickhouseUser();
    if (userInfo().uid === 0 && !asUser && user) {
      asUser = user;
      chownTree(dir, user.uid, user.gid);
      spawnServer();
      if ((await waitReady()) === 'ready') return;
      child = null;
    }
    throw new Error(`private clickhouse exited before answering /ping\n${tail()}`);
  }

  async function stop(graceMs = 30_000): Promise<void> {
    const proc = child as ChildProcess | null;
    if (!proc) return;
    child = null;
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    }
  }

  try {
    await start();
  } catch (error) {
    await stop(2000);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }

  return {
    url,
    httpPort,
    tcpPort,
    dir,
    stop,
    start,
    async destroy() {
      await stop(5000);
      rmSync(dir, { recursive: true, force: true });
    },
    errorLog: tail,
    pid() {
      const proc = child as ChildProcess | null;
      return proc && proc.exitCode === null && proc.signalCode === null ? proc.pid : undefined;
    },
  };
}
