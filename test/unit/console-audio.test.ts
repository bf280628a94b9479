import test from 'ava';
import { parseWav, pcmToWav, readFrames, ulawToPcm } from '../../plugins/console/web/src/audio.ts';
import { toCsv } from '../../plugins/console/web/src/csv.ts';

/**
 * The playground's handling of `POST /tts/stream` (SPEC: 4-byte big-endian
 * length, then the frame; a zero length ends a complete stream; pcm and ulaw
 * frames can simply be joined) and the usage page's CSV, without a browser.
 */

function framed(frames: Uint8Array[], end = true): Uint8Array {
  const parts: number[] = [];
  for (const f of frames) parts.push(...[f.length >>> 24, (f.length >>> 16) & 255, (f.length >>> 8) & 255, f.length & 255], ...f);
  if (end) parts.push(0, 0, 0, 0);
  return Uint8Array.from(parts);
}

/** A stream that hands the bytes over in chunks of `size`, cutting frames and length prefixes anywhere. */
function chunked(bytes: Uint8Array, size: number): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}

test('frames are read whole however the bytes arrive, and the zero-length marker says the stream is complete', async (t) => {
  const frames = [Uint8Array.from([1, 2, 3]), Uint8Array.from([4]), new Uint8Array(300).fill(7)];
  for (const size of [1, 3, 5, 64, 1000]) {
    const seen: number[][] = [];
    t.true(await readFrames(chunked(framed(frames), size), (f) => void seen.push([...f])), `chunks of ${size}`);
    t.deepEqual(seen, frames.map((f) => [...f]));
  }
});

test('a body that stops without the marker is a stream cut short', async (t) => {
  const seen: Uint8Array[] = [];
  t.false(await readFrames(chunked(framed([Uint8Array.from([1, 2])], false), 2), (f) => void seen.push(f)));
  t.is(seen.length, 1);
  t.false(await readFrames(chunked(framed([Uint8Array.from([1, 2, 3, 4])], false).slice(0, 6), 2), () => t.fail('a partial frame is not a frame')));
});

test('PCM chunks join into one WAV whose header parses back, and a 44-byte WAV is a heartbeat with no samples', async (t) => {
  const pcm = [Uint8Array.from([1, 0, 2, 0]), Uint8Array.from([3, 0])];
  const wav = new Uint8Array(await pcmToWav(pcm, 24_000).arrayBuffer());
  t.is(wav.length, 44 + 6);
  t.deepEqual(parseWav(wav), { sampleRate: 24_000, channels: 1, bitsPerSample: 16, dataOffset: 44, dataLength: 6 });
  t.deepEqual([...wav.subarray(44)], [1, 0, 2, 0, 3, 0]);
  const heartbeat = new Uint8Array(await pcmToWav([], 48_000).arrayBuffer());
  t.is(heartbeat.length, 44);
  t.is(parseWav(heartbeat)?.dataLength, 0);
  t.is(parseWav(Uint8Array.from([1, 2, 3])), null);
});

test('G.711 mu-law decodes to the standard 16-bit values', (t) => {
  const pcm = ulawToPcm(Uint8Array.from([0xff, 0x7f, 0x80, 0x00, 0xf0, 0x70]));
  const view = new DataView(pcm.buffer);
  t.deepEqual([0, 1, 2, 3, 4, 5].map((i) => view.getInt16(i * 2, true)), [0, 0, 32124, -32124, 120, -120]);
});

test('CSV: the API field names as the header, quotes where a cell needs them, formulas defused, numbers untouched', (t) => {
  const csv = toCsv(['voice', 'requests', 'note'], [
    { voice: 'Lan', requests: 3, note: 'a, "b"' },
    { voice: '=HYPERLINK("x")', requests: -2, note: null },
  ]);
  t.is(csv, 'voice,requests,note\r\nLan,3,"a, ""b"""\r\n"\'=HYPERLINK(""x"")",-2,\r\n');
});
