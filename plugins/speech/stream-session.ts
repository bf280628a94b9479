/**
 * Writes one `POST /tts/stream` body: audio frames as the engine produces
 * them, heartbeats on WAV streams while nothing new has been synthesised,
 * and the zero-length terminator only when the audio is complete.
 */
import type { AudioFormat } from '../../core/speechkit/audio/index.ts';
import type { ResponseSink } from './sink.ts';
import type { RunEnd, SpeechRun } from './synthesis.ts';
import { TERMINATOR, frameEncoder, gatherFrames, heartbeatFrame, lengthPrefix, minFrameSeconds } from './stream-frames.ts';

export interface FrameStreamOptions {
  format: AudioFormat;
  sampleRate: number;
  /** longest silence on the wire before a heartbeat (WAV streams only); null for none */
  heartbeatMs: number | null;
}

/** Sends a heartbeat whenever nothing has been written for `ms`. */
class Heartbeat {
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly sink: ResponseSink, private readonly frame: Buffer, private readonly ms: number) {}

  /** Restarts the countdown; called after every frame written. */
  reset(): void {
    this.stop();
    this.timer = setTimeout(() => this.beat(), this.ms);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private beat(): void {
    if (!this.sink.open) return;
    // A client that has not taken the last frame yet has heard from us recently enough.
    if (!this.sink.backedUp) void this.sink.write(this.frame);
    this.reset();
  }
}

export class FrameStream {
  private readonly heartbeat: Heartbeat | null;
  private readonly heartbeatBytes: Buffer;

  constructor(private readonly run: SpeechRun, private readonly sink: ResponseSink, private readonly options: FrameStreamOptions) {
    this.heartbeatBytes = heartbeatFrame(options.sampleRate);
    this.heartbeat = options.heartbeatMs !== null ? new Heartbeat(sink, this.heartbeatBytes, options.heartbeatMs) : null;
  }

  /**
   * Streams every frame; resolves with how the stream ended. `waited`: the
   * engine has not produced audio yet, so the client gets a heartbeat first
   * rather than silence.
   */
  async send(waited: boolean): Promise<RunEnd> {
    const { run, sink, options } = this;
    const encode = frameEncoder(options.format, options.sampleRate);
    const minBytes = Math.round(minFrameSeconds(options.format) * options.sampleRate) * 2;
    if (waited && this.heartbeat) await sink.write(this.heartbeatBytes);
    this.heartbeat?.reset();
    let threw = false;
    try {
      for await (const pcm of gatherFrames(run.pcm(), minBytes)) {
        const body = await encode(pcm);
        if (!(await sink.write(lengthPrefix(body.length), body))) {
          run.stop('client_gone');
          break;
        }
        this.heartbeat?.reset();
      }
    } catch {
      // The run records whether the engine failed or was stopped; an encoder failure is caught below.
      threw = true;
    } finally {
      this.heartbeat?.stop();
    }
    const end = run.end ?? 'failed';
    return threw && end === 'complete' ? 'failed' : end;
  }

  /** Ends the body: the terminator marks a complete stream; a cut-short one just stops. */
  async finish(end: RunEnd): Promise<void> {
    if (end === 'client_gone') return;
    if (end === 'complete') await this.sink.write(TERMINATOR);
    await this.sink.end();
  }
}
