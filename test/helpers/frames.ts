/**
 * A client-side parser of the `POST /tts/stream` body, written from SPEC
 * alone (not from the server's code): 4-byte big-endian length N, then N
 * bytes, repeated; a zero-length frame ends a complete stream; 44-byte WAV
 * frames with no samples are heartbeats to skip.
 */

export const HEARTBEAT_BYTES = 44;

export function isHeartbeat(frame: Buffer): boolean {
  return (
    frame.length === HEARTBEAT_BYTES &&
    frame.toString('ascii', 0, 4) === 'RIFF' &&
    frame.toString('ascii', 8, 12) === 'WAVE' &&
    frame.toString('ascii', 36, 40) === 'data' &&
    frame.readUInt32LE(40) === 0
  );
}

export type FrameEvent = { kind: 'audio'; frame: Buffer } | { kind: 'heartbeat' } | { kind: 'end' };

/** Incremental parser: feed it network chunks, get whole frames back. */
export class FrameReader {
  private buffered = Buffer.alloc(0);
  terminated = false;

  push(chunk: Uint8Array): FrameEvent[] {
    if (this.terminated && chunk.length > 0) throw new Error('bytes after the terminator');
    this.buffered = Buffer.concat([this.buffered, chunk]);
    const events: FrameEvent[] = [];
    while (!this.terminated && this.buffered.length >= 4) {
      const length = this.buffered.readUInt32BE(0);
      if (length === 0) {
        this.terminated = true;
        events.push({ kind: 'end' });
        if (this.buffered.length > 4) throw new Error('bytes after the terminator');
        this.buffered = Buffer.alloc(0);
        break;
      }
      if (this.buffered.length < 4 + length) break;
      const frame = Buffer.from(this.buffered.subarray(4, 4 + length));
      this.buffered = this.buffered.subarray(4 + length);
      events.push(isHeartbeat(frame) ? { kind: 'heartbeat' } : { kind: 'audio', frame });
    }
    return events;
  }

  /** Bytes of a frame that never finished arriving (a stream cut mid-frame). */
  get leftover(): number {
    return this.buffered.length;
  }
}

export interface ParsedStream {
  /** audio frames in order, heartbeats removed */
  frames: Buffer[];
  heartbeats: number;
  /** the zero-length terminator arrived: the only proof the stream is complete */
  terminated: boolean;
  leftover: number;
}

export function parseFrameStream(bytes: Buffer): ParsedStream {
  const reader = new FrameReader();
  const frames: Buffer[] = [];
  let heartbeats = 0;
  for (const event of reader.push(bytes)) {
    if (event.kind === 'audio') frames.push(event.frame);
    else if (event.kind === 'heartbeat') heartbeats++;
  }
  return { frames, heartbeats, terminated: reader.terminated, leftover: reader.leftover };
}

/** Reads a response body as it arrives; `onEvent` returning false stops reading (and cancels the body). */
export async function readFrameStream(
  body: ReadableStream<Uint8Array>,
  onEvent: (event: FrameEvent) => boolean | void = () => true,
): Promise<ParsedStream & { stoppedEarly: boolean }> {
  const reader = new FrameReader();
  const frames: Buffer[] = [];
  let heartbeats = 0;
  const source = body.getReader();
  try {
    for (;;) {
      const { value, done } = await source.read();
      if (done) break;
      for (const event of reader.push(value)) {
        if (event.kind === 'audio') frames.push(event.frame);
        else if (event.kind === 'heartbeat') heartbeats++;
        if (onEvent(event) === false) {
          await source.cancel();
          return { frames, heartbeats, terminated: reader.terminated, leftover: reader.leftover, stoppedEarly: true };
        }
      }
    }
  } catch (err) {
    // A connection cut mid-body: what arrived so far is the answer.
    if (!(err instanceof TypeError)) throw err;
  }
  return { frames, heartbeats, terminated: reader.terminated, leftover: reader.leftover, stoppedEarly: false };
}
