/**
 * espeak-ng processes started ahead of the request that will use them. A
 * started espeak-ng has loaded its phoneme data, voice and dictionary
 * (about 9 ms) and waits for its text on stdin, so a request that finds a
 * spare skips that start-up on its way to the first audio. One spare per
 * voice setting, for the few settings used last; taking one starts its
 * replacement on the next turn of the event loop. Spares do not keep the
 * process alive. They are started by the launcher's small helper process,
 * so this (large) process never forks for them.
 */
import { startChild, type ChildRun } from '../../core/speechkit/launcher.ts';

export class SpareEspeaks {
  /** insertion order is recency: the first entry is the least recently used setting */
  private readonly spares = new Map<string, ChildRun>();
  /** settings whose spare is being started */
  private readonly starting = new Set<string>();
  private closed = false;

  constructor(private readonly binary: string, private readonly maxSettings = 4) {}

  /** A started espeak-ng with these arguments: a spare when one is ready, a new one otherwise. */
  async take(args: string[]): Promise<ChildRun> {
    const key = args.join('\0');
    const spare = this.spares.get(key);
    this.spares.delete(key);
    setImmediate(() => this.fill(key, args));
    if (spare?.running()) {
      spare.setRef(true);
      return spare;
    }
    spare?.kill();
    return startChild(this.binary, args);
  }

  close(): void {
    this.closed = true;
    for (const spare of this.spares.values()) spare.kill();
    this.spares.clear();
  }

  private fill(key: string, args: string[]): void {
    if (this.closed || this.spares.has(key) || this.starting.has(key)) return;
    this.starting.add(key);
    void startChild(this.binary, args).then((spare) => {
      this.starting.delete(key);
      spare.setRef(false);
      if (this.closed || this.spares.has(key)) {
        spare.kill();
        return;
      }
      if (this.spares.size >= this.maxSettings) {
        const [oldest, old] = this.spares.entries().next().value as [string, ChildRun];
        this.spares.delete(oldest);
        old.kill();
      }
      this.spares.set(key, spare);
      void spare.exited.then(() => {
        if (this.spares.get(key) === spare) this.spares.delete(key);
      });
    });
  }
}
