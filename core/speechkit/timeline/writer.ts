/**
 * Writes clips onto a timeline of s16le mono PCM in time order: the gap
 * before each clip is filled with silence, and nothing is held in memory
 * beyond the clip being written (the output is a stream with back-pressure).
 */
import type { Writable } from 'node:stream';
import { writeWithBackPressure } from '../audio/back-pressure.ts';

const SILENCE_CHUNK_SAMPLES = 48_000;

export class TimelineWriter {
  /** samples written so far: the current end of the timeline */
  private position = 0;

  constructor(private readonly out: Writable, readonly sampleRate: number) {}

  get samples(): number {
    return this.position;
  }

  get seconds(): number {
    return this.position / this.sampleRate;
  }

  /** Writes `pcm` starting at `startSample`; throws when that is before what was already written. */
  async place(startSample: number, pcm: Buffer): Promise<{ start: number; end: number }> {
    const start = Math.round(startSample);
    if (start < this.position) throw new RangeError(`clip at sample ${start} would overlap the timeline, already written to ${this.position}`);
    await this.padTo(start);
    await this.write(pcm.subarray(0, pcm.length - (pcm.length % 2)));
    return { start, end: this.position };
  }

  /** Appends a clip right where the timeline ends. */
  append(pcm: Buffer): Promise<{ start: number; end: number }> {
    return this.place(this.position, pcm);
  }

  /** Silence up to `totalSamples` (nothing when the timeline is already that long). */
  async padTo(totalSamples: number): Promise<void> {
    let missing = Math.round(totalSamples) - this.position;
    while (missing > 0) {
      const n = Math.min(missing, SILENCE_CHUNK_SAMPLES);
      await this.write(Buffer.alloc(n * 2));
      missing -= n;
    }
  }

  private async write(chunk: Buffer): Promise<void> {
    if (chunk.length === 0) return;
    this.position += chunk.length >> 1;
    await writeWithBackPressure(this.out, chunk);
  }
}
