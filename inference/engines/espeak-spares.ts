/**
 * espeak-ng processes started ahead of the request that will use them. A
 * started espeak-ng has loaded its phoneme data, voice and dictionary
 * (about 9 ms) and waits for its text on stdin, so a request that finds a
 * spare skips both that start-up and the fork of this (large) process on
 * its way to the first audio. One spare per voice setting, for the few
 * settings used last; taking one starts its replacement on the next turn
 * of the event loop. Spares do not keep the process alive.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

export type EspeakExit = { code: number | null; sig: NodeJS.Signals | null } | Error;

export interface EspeakChild {
  child: ChildProcessWithoutNullStreams;
  /** settles once: the exit status, or the spawn error (ENOENT) */
  exited: Promise<EspeakExit>;
  /** the start of what it wrote to stderr */
  stderr(): string;
}

export function launchEspeak(binary: string, args: string[]): EspeakChild {
  const child = spawn(binary, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    if (stderr.length < 2000) stderr += d.toString();
  });
  const exited = new Promise<EspeakExit>((resolve) => {
    child.once('error', resolve);
    child.once('close', (code, sig) => resolve({ code, sig }));
  });
  // EPIPE when the child dies early is reported through 'close' instead.
  child.stdin.on('error', () => undefined);
  return { child, exited, stderr: () => stderr };
}

/** Child stdio streams are sockets over pipes; only their handles keep the event loop alive. */
type Handle = { ref(): void; unref(): void };

function setRef(c: EspeakChild, on: boolean): void {
  const handles = [c.child, c.child.stdin, c.child.stdout, c.child.stderr] as unknown as Handle[];
  for (const handle of handles) {
    if (on) handle.ref();
    else handle.unref();
  }
}

export class SpareEspeaks {
  /** insertion order is recency: the first entry is the least recently used setting */
  private readonly spares = new Map<string, EspeakChild & { dead: boolean }>();
  private closed = false;

  constructor(private readonly binary: string, private readonly maxSettings = 4) {}

  /** A started espeak-ng with these arguments: a spare when one is ready, a new one otherwise. */
  take(args: string[]): EspeakChild {
    const key = args.join('\0');
    const spare = this.spares.get(key);
    this.spares.delete(key);
    setImmediate(() => this.fill(key, args));
    if (spare && !spare.dead && spare.child.exitCode === null) {
      setRef(spare, true);
      return spare;
    }
    spare?.child.kill('SIGKILL');
    return launchEspeak(this.binary, args);
  }

  close(): void {
    this.closed = true;
    for (const spare of this.spares.values()) spare.child.kill('SIGKILL');
    this.spares.clear();
  }

  private fill(key: string, args: string[]): void {
    if (this.closed || this.spares.has(key)) return;
    if (this.spares.size >= this.maxSettings) {
      const [oldest, spare] = this.spares.entries().next().value as [string, EspeakChild];
      this.spares.delete(oldest);
      spare.child.kill('SIGKILL');
    }
    const spare = { ...launchEspeak(this.binary, args), dead: false };
    setRef(spare, false);
    void spare.exited.then(() => {
      spare.dead = true;
      if (this.spares.get(key) === spare) this.spares.delete(key);
    });
    this.spares.set(key, spare);
  }
}
