/**
 * Child processes with piped stdio (espeak-ng and lame per request),
 * started by a small helper process (launcher-process.ts). fork() copies
 * the page tables of the process that calls it: 1 ms for a fresh Node
 * process, 4 ms for the API at 170 MB, 7.6 ms at 300 MB, all of it CPU that
 * no request needed. The helper stays small, so every start costs it about
 * a millisecond instead. Each child's stdin and stdout are one connection to
 * a Unix socket this process listens on (in a directory only this user can
 * enter), opened by the helper with a random token that names the run: no
 * descriptor travels over the IPC channel, so nothing waits for this event
 * loop to acknowledge one before the next start.
 *
 * Until the helper has loaded, and if it cannot start or dies, children are
 * spawned in this process as before: a request never waits for the helper.
 * The helper never keeps this process alive, and ends when it does.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { siblingModule } from './module-url.ts';
import { MAX_STDERR, TOKEN_LENGTH, type LauncherReply, type LauncherRequest } from './launcher-protocol.ts';

export type ChildExit = { code: number | null; signal: NodeJS.Signals | null } | Error;

export interface ChildRun {
  readonly stdin: Writable;
  readonly stdout: Readable;
  /** settles once: the exit status, or the error that kept it from starting (ENOENT) */
  readonly exited: Promise<ChildExit>;
  /** the start of what it wrote to stderr (complete once `exited` has settled) */
  stderr(): string;
  /** SIGKILL */
  kill(): void;
  running(): boolean;
  /** whether the run keeps this process's event loop alive (a spare waiting for work does not) */
  setRef(on: boolean): void;
}

/** The helper's module; exported so the compiled build's test can check it is there. */
export const LAUNCHER_PROCESS = siblingModule(import.meta.url, 'launcher-process');


type Handle = { ref(): void; unref(): void };

/** A child spawned by this process itself: the fallback, and the reference the helper's runs behave like. */
export function spawnHere(command: string, args: string[]): ChildRun {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    if (stderr.length < MAX_STDERR) stderr += d.toString();
  });
  const exited = new Promise<ChildExit>((resolve) => {
    child.once('error', resolve);
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  // EPIPE when the child dies early is reported through 'close' instead.
  child.stdin.on('error', () => undefined);
  return {
    stdin: child.stdin,
    stdout: child.stdout,
    exited,
    stderr: () => stderr,
    kill: () => void child.kill('SIGKILL'),
    running: () => child.exitCode === null && child.signalCode === null,
    setRef(on) {
      for (const handle of [child, child.stdin, child.stdout, child.stderr] as unknown as Handle[]) {
        if (on) handle.ref();
        else handle.unref();
      }
    },
  };
}

/** A run whose process never started: empty output, and the reason as its exit. */
function failedRun(error: Error): ChildRun {
  const stdout = new PassThrough();
  stdout.end();
  const stdin = new PassThrough();
  stdin.resume();
  return { stdin, stdout, exited: Promise.resolve(error), stderr: () => '', kill: () => undefined, running: () => false, setRef: () => undefined };
}

interface Pending {
  token: string;
  command: string;
  args: string[];
  exited: Promise<ChildExit>;
  exit(result: ChildExit): void;
  started(run: ChildRun): void;
  /** the child's stdin and stdout, once its connection has come */
  socket?: Socket;
  /** set once the helper has said the child runs */
  pid?: number;
  run?: ChildRun;
  stderr: string;
  /** whether this run keeps the channel (and so this process) alive */
  ref: boolean;
}

class Launcher {
  private helper: ChildProcess | null = null;
  private server: Server | null = null;
  private ready = false;
  /** set when the helper could not start: this process spawns for itself from then on */
  private unavailable = false;
  private nextId = 1;
  private readonly runs = new Map<number, Pending>();
  private readonly byToken = new Map<string, number>();

  start(command: string, args: string[]): Promise<ChildRun> {
    if (!this.ready || !this.helper?.connected) {
      if (!this.helper && !this.unavailable) this.boot();
      return Promise.resolve(spawnHere(command, args));
    }
    const id = this.nextId++;
    const token = randomBytes(TOKEN_LENGTH / 2).toString('hex');
    return new Promise<ChildRun>((started) => {
      let exit!: (result: ChildExit) => void;
      const exited = new Promise<ChildExit>((resolve) => (exit = resolve));
      this.runs.set(id, { token, command, args, exited, exit, started, stderr: '', ref: true });
      this.byToken.set(token, id);
      this.refChannel();
      this.helper!.send({ op: 'start', id, token, command, args } satisfies LauncherRequest);
    });
  }

  private boot(): void {
    let helper: ChildProcess;
    let server: Server;
    try {
      // A directory only this user can enter holds the socket; it goes when this process does.
      const dir = mkdtempSync(path.join(tmpdir(), 'vieneu-launcher-'));
      process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
      const socketPath = path.join(dir, 'children.sock');
      server = createServer({ allowHalfOpen: true }, (socket) => this.onConnection(socket));
      server.listen(socketPath);
      server.unref();
      helper = fork(LAUNCHER_PROCESS, [socketPath], {
        // The helper's own flags only: the server's (--cpu-prof, heap sizes) are not for it.
        execArgv: LAUNCHER_PROCESS.pathname.endsWith('.ts') ? ['--import=tsx'] : [],
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        serialization: 'json',
      });
    } catch {
      this.unavailable = true;
      return;
    }
    this.server = server;
    this.helper = helper;
    helper.unref();
    (helper.channel as unknown as Handle | undefined)?.unref();
    helper.on('message', (reply: LauncherReply) => this.onReply(reply));
    helper.once('error', () => this.lost(helper));
    helper.once('exit', () => this.lost(helper));
  }

  /** A child's connection: its first bytes are the token of the run it belongs to; anything else is dropped. */
  private onConnection(socket: Socket): void {
    socket.on('error', () => undefined);
    const timer = setTimeout(() => socket.destroy(), 10_000);
    timer.unref();
    const readToken = () => {
      const token = socket.read(TOKEN_LENGTH) as Buffer | null;
      if (!token) return;
      socket.off('readable', readToken);
      clearTimeout(timer);
      const id = this.byToken.get(token.toString('latin1'));
      const pending = id === undefined ? undefined : this.runs.get(id);
      if (!pending || pending.socket) {
        socket.destroy();
        return;
      }
      this.byToken.delete(pending.token);
      pending.socket = socket;
      this.settleStart(id!, pending);
    };
    socket.on('readable', readToken);
  }

  private onReply(reply: LauncherReply): void {
    if (reply.op === 'ready') {
      this.ready = true;
      return;
    }
    const pending = this.runs.get(reply.id);
    if (!pending) return;
    switch (reply.op) {
      case 'started':
        pending.pid = reply.pid;
        this.settleStart(reply.id, pending);
        return;
      case 'exit':
        this.forget(reply.id, pending);
        pending.stderr = reply.stderr;
        pending.exit({ code: reply.code, signal: reply.signal });
        // A child killed before it started has no run yet.
        if (!pending.run) pending.started(failedRun(new Error('killed before it started')));
        return;
      case 'failed': {
        this.forget(reply.id, pending);
        pending.socket?.destroy();
        const err = Object.assign(new Error(`spawn ${reply.error}`), { code: reply.error });
        pending.exit(err);
        if (!pending.run) pending.started(failedRun(err));
      }
    }
  }

  /** The run starts once the helper has said so and its connection is here (in either order). */
  private settleStart(id: number, pending: Pending): void {
    if (pending.run || pending.pid === undefined || !pending.socket) return;
    pending.run = this.helperRun(id, pending, pending.socket);
    pending.started(pending.run);
  }

  private helperRun(id: number, pending: Pending, socket: Socket): ChildRun {
    // Output ends when the connection does, however it ends (a child killed with input unread resets it):
    // what happened to the child is its exit status, as for a child spawned here.
    const stdout = new PassThrough();
    socket.pipe(stdout);
    socket.once('error', () => stdout.end());
    let running = true;
    void pending.exited.then((result) => {
      running = false;
      // The helper died under it: closing our end stops the orphan (EOF on its stdin, EPIPE on its stdout).
      if (result instanceof Error) socket.destroy();
    });
    return {
      stdin: socket,
      stdout,
      exited: pending.exited,
      stderr: () => pending.stderr,
      kill: () => {
        if (running && this.helper?.connected) this.helper.send({ op: 'kill', id } satisfies LauncherRequest);
      },
      running: () => running,
      setRef: (on) => {
        if (on) socket.ref();
        else socket.unref();
        pending.ref = on;
        this.refChannel();
      },
    };
  }

  private forget(id: number, pending: Pending): void {
    this.runs.delete(id);
    this.byToken.delete(pending.token);
    this.refChannel();
  }

  /** The helper exited: runs it had started end with an error; the others, and the next start, spawn here and boot a new helper. */
  private lost(helper: ChildProcess): void {
    if (this.helper !== helper) return;
    // A helper that never said it was ready will not do better next time.
    if (!this.ready) this.unavailable = true;
    this.helper = null;
    this.ready = false;
    this.server?.close();
    this.server = null;
    const runs = [...this.runs.values()];
    this.runs.clear();
    this.byToken.clear();
    const err = new Error('the process launcher exited');
    for (const pending of runs) {
      if (pending.run) {
        pending.exit(err);
        continue;
      }
      // Not started yet: it starts here instead, and its caller never knows.
      pending.socket?.destroy();
      const here = spawnHere(pending.command, pending.args);
      void here.exited.then(pending.exit);
      pending.started({ ...here, exited: pending.exited });
    }
  }

  /** The channel keeps this process alive only while it waits on a run that is not a spare. */
  private refChannel(): void {
    const channel = this.helper?.channel as unknown as Handle | undefined;
    if (!channel) return;
    if ([...this.runs.values()].some((p) => p.ref)) channel.ref();
    else channel.unref();
  }
}

const launcher = new Launcher();

/** Starts `command` with piped stdio, through the launcher's helper process once it is up. */
export function startChild(command: string, args: string[]): Promise<ChildRun> {
  return launcher.start(command, args);
}
