/**
 * Trims the silence an engine puts before and after a line of speech, so the
 * silences between lines are exactly the ones SPEC asks for. Streaming: a
 * quiet run inside the speech is held until sound follows it (then passed
 * on whole) and dropped when the line ends on it.
 */

/** |sample| at or under this counts as silence (about -54 dBFS). */
const QUIET = 64;
/** kept on each side of the sound so soft onsets and tails are not clipped */
const PAD_SAMPLES = 480;

function firstLoud(pcm: Buffer): number {
  for (let i = 0; i + 1 < pcm.length; i += 2) if (Math.abs(pcm.readInt16LE(i)) > QUIET) return i;
  return -1;
}

function lastLoud(pcm: Buffer): number {
  for (let i = pcm.length - 2; i >= 0; i -= 2) if (Math.abs(pcm.readInt16LE(i)) > QUIET) return i;
  return -1;
}

export async function* trimSilence(chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  let started = false;
  let lead: Buffer[] = [];
  let held: Buffer[] = [];
  let leftover: Buffer | null = null;
  for await (let chunk of chunks) {
    if (leftover) {
      chunk = Buffer.concat([leftover, chunk]);
      leftover = null;
    }
    if (chunk.length % 2 === 1) {
      leftover = chunk.subarray(chunk.length - 1);
      chunk = chunk.subarray(0, chunk.length - 1);
    }
    if (!started) {
      const at = firstLoud(chunk);
      if (at < 0) {
        // Only the last PAD_SAMPLES of the leading silence may be needed.
        lead.push(chunk);
        const bytes = lead.reduce((n, b) => n + b.length, 0);
        if (bytes > PAD_SAMPLES * 4) lead = [Buffer.concat(lead).subarray(-PAD_SAMPLES * 2)];
        continue;
      }
      started = true;
      const before = Buffer.concat([...lead, chunk.subarray(0, at)]);
      lead = [];
      yield before.subarray(Math.max(0, before.length - PAD_SAMPLES * 2));
      chunk = chunk.subarray(at);
    }
    const end = lastLoud(chunk);
    if (end < 0) {
      held.push(chunk);
      continue;
    }
    if (held.length > 0) {
      yield* held;
      held = [];
    }
    yield chunk.subarray(0, end + 2);
    if (end + 2 < chunk.length) held.push(chunk.subarray(end + 2));
  }
  if (started && held.length > 0) {
    const tail = Buffer.concat(held);
    yield tail.subarray(0, Math.min(tail.length, PAD_SAMPLES * 2));
  }
}
