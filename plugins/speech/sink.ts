/**
 * The response body as the streaming code sees it: ordered writes that wait
 * while the client reads slower than synthesis (back-pressure, so nothing
 * piles up in memory), and a signal that fires when the client goes away.
 */
import { STATUS_CODES } from 'node:http';
import type { Writable } from 'node:stream';

export class ResponseSink {
  private readonly gone = new AbortController();

  /**
   * @param stallMs a client that takes nothing for this long is treated as
   *   gone: the connection is closed rather than held (and its engine and
   *   stream slot with it) for as long as the peer keeps the socket open
   */
  constructor(private readonly out: Writable, private readonly stallMs: number) {
    out.once('close', () => {
      if (!out.writableFinished) this.gone.abort();
    });
    if (out.destroyed) this.gone.abort();
  }

  /** fires when the client disconnects before the body was complete */
  get clientGone(): AbortSignal {
    return this.gone.signal;
  }

  get open(): boolean {
    return !this.gone.signal.aborted && !this.out.destroyed && !this.out.writableEnded;
  }

  /** True when the client has not taken the last write yet; heartbeats are pointless then. */
  get backedUp(): boolean {
    return this.out.writableNeedDrain;
  }

  /** Declares the body's length before the first write (a whole file whose size is known). */
  setLength(bytes: number): void {
    const res = this.out as Writable & { headersSent?: boolean; setHeader?: (name: string, value: string) => void };
    if (!res.headersSent && res.setHeader) res.setHeader('Content-Length', String(bytes));
  }

  /**
   * Answers with an error instead, when nothing of the body has been sent
   * yet (a whole file that could not be completed). False when it is too late.
   */
  answerError(status: number, body: unknown, headers: Record<string, string> = {}): boolean {
    const res = this.out as Writable & {
      headersSent?: boolean; statusCode?: number; statusMessage?: string; setHeader?: (n: string, v: string) => void; removeHeader?: (n: string) => void;
    };
    if (!this.open || res.headersSent || !res.setHeader || !res.removeHeader) return false;
    const json = Buffer.from(JSON.stringify(body));
    res.statusCode = status;
    // The route had answered 200 when the body began, which set the reason phrase too ("500 OK" otherwise).
    res.statusMessage = STATUS_CODES[status] ?? '';
    for (const name of ['Content-Length', 'X-Sample-Rate']) res.removeHeader(name);
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', String(json.length));
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    this.out.end(json);
    return true;
  }

  /**
   * Writes the parts back to back, as one write; resolves once the client can
   * take more. False when the client is gone. One write rather than cork():
   * on Node 22 and 24 a response written while corked answers false but never emits
   * 'drain', so every stream stalled after its first frame.
   */
  async write(...parts: Buffer[]): Promise<boolean> {
    if (!this.open) return false;
    if (!this.out.write(parts.length === 1 ? parts[0]! : Buffer.concat(parts))) await this.drained();
    return this.open;
  }

  /** Ends the body normally; resolves when it has been handed to the socket or the client went away. */
  end(): Promise<void> {
    if (!this.open) return Promise.resolve();
    return new Promise((resolve) => {
      this.out.once('close', resolve);
      this.out.end(resolve);
    });
  }

  /**
   * Cuts the connection so the client sees a transfer that did not finish
   * (headerless audio has no other way to say it is incomplete).
   */
  cut(): void {
    this.out.destroy();
  }

  private drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(stalled);
        this.out.off('drain', done);
        this.out.off('close', done);
        resolve();
      };
      const stalled = setTimeout(() => {
        done();
        this.cut();
      }, this.stallMs);
      this.out.on('drain', done);
      this.out.on('close', done);
    });
  }
}
