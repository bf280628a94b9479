import test from 'ava';
import { parseWavHeader, wavData } from '../../core/speechkit/audio/index.ts';
import { TERMINATOR, frameEncoder, gatherFrames, heartbeatFrame, lengthPrefix, streamFormatName } from '../../plugins/speech/stream-frames.ts';
import { DELTA_BYTES, deltaEvents, doneEvent, errorEvent } from '../../plugins/speech/sse.ts';
import { FrameReader, isHeartbeat, parseFrameStream } from '../helpers/frames.ts';
import { probeAudio } from '../helpers/audio-probe.ts';

/** A 440 Hz tone, so decoders have something that is not silence. */
function tone(seconds: number, rate: number): Buffer {
  const n = Math.round(seconds * rate);
  const out = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) out.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), i * 2);
  return out;
}

const framed = (body: Buffer) => Buffer.concat([lengthPrefix(body.length), body]);

test('a frame is a 4-byte big-endian length then the bytes; the terminator is a zero length', (t) => {
  t.deepEqual([...lengthPrefix(0x01020304)], [1, 2, 3, 4]);
  t.deepEqual([...TERMINATOR], [0, 0, 0, 0]);
});

test('a heartbeat is a framed, valid 44-byte WAV with zero samples that clients recognise and skip', (t) => {
  const beat = heartbeatFrame(48000);
  t.is(beat.length, 48);
  t.is(beat.readUInt32BE(0), 44);
  const wav = beat.subarray(4);
  const info = parseWavHeader(wav)!;
  t.is(info.sampleRate, 48000);
  t.is(info.dataBytes, 0);
  t.true(isHeartbeat(wav));
  t.false(isHeartbeat(framed(Buffer.alloc(44)).subarray(4)), 'zero bytes are not a WAV');
});

test('X-Stream-Format: len32-wav-chunks for WAV frames, len32-frames for raw codec frames', (t) => {
  t.is(streamFormatName('wav'), 'len32-wav-chunks');
  for (const f of ['mp3', 'opus', 'pcm', 'ulaw'] as const) t.is(streamFormatName(f), 'len32-frames');
});

test('WAV frames are self-contained WAV files with exact sizes', async (t) => {
  const pcm = tone(0.2, 24000);
  const frame = await frameEncoder('wav', 24000)(pcm);
  const { info, data } = wavData(frame);
  t.is(info.sampleRate, 24000);
  t.is(info.dataBytes, pcm.length);
  t.deepEqual(data, pcm);
});

test('pcm frames are the samples; ulaw frames one byte per sample', async (t) => {
  const pcm = tone(0.1, 8000);
  t.deepEqual(await frameEncoder('pcm', 8000)(pcm), pcm);
  t.is((await frameEncoder('ulaw', 8000)(pcm)).length, pcm.length / 2);
});

for (const format of ['mp3', 'opus'] as const) {
  test(`each ${format} frame is a complete small file that decodes on its own`, async (t) => {
    const rate = format === 'opus' ? 48000 : 24000;
    const encode = frameEncoder(format, rate);
    const frames = [await encode(tone(0.5, rate)), await encode(tone(1, rate))];
    for (const [i, frame] of frames.entries()) {
      const probed = await probeAudio(frame);
      t.is(probed.codec, format);
      t.is(probed.sampleRate, rate);
      t.is(probed.channels, 1);
      t.true(Math.abs(probed.duration - [0.5, 1][i]) < 0.1, `frame ${i}: ${probed.duration}`);
    }
  });
}

test('frames gather small pieces to the minimum size, but the first frame is never held back', async (t) => {
  async function* pieces() {
    for (const size of [10, 10, 10, 30, 10, 4]) yield Buffer.alloc(size, size);
  }
  const frames: number[] = [];
  for await (const frame of gatherFrames(pieces(), 25)) frames.push(frame.length);
  t.deepEqual(frames, [10, 50, 14]);
});

test('SSE: base64 deltas of bounded size, one done event, an error event; each a data line of JSON', (t) => {
  const audio = Buffer.alloc(DELTA_BYTES * 2 + 10, 7);
  const deltas = deltaEvents(audio);
  t.is(deltas.length, 3);
  const decoded = Buffer.concat(deltas.map((e) => {
    const text = e.toString();
    t.true(text.startsWith('data: ') && text.endsWith('\n\n'));
    const event = JSON.parse(text.slice(6));
    t.is(event.type, 'speech.audio.delta');
    return Buffer.from(event.audio, 'base64');
  }));
  t.deepEqual(decoded, audio);
  t.is(JSON.parse(doneEvent(1.23456).toString().slice(6)).type, 'speech.audio.done');
  t.is(JSON.parse(errorEvent('x').toString().slice(6)).type, 'speech.audio.error');
});

test('the client parser reads frames split anywhere, skips heartbeats and sees the terminator', (t) => {
  const a = Buffer.from('first frame');
  const b = Buffer.from('second');
  const stream = Buffer.concat([heartbeatFrame(48000), framed(a), heartbeatFrame(48000), framed(b), TERMINATOR]);
  const reader = new FrameReader();
  const audio: Buffer[] = [];
  let heartbeats = 0;
  for (const byte of stream) {
    for (const e of reader.push(Buffer.from([byte]))) {
      if (e.kind === 'audio') audio.push(e.frame);
      if (e.kind === 'heartbeat') heartbeats++;
    }
  }
  t.deepEqual(audio, [a, b]);
  t.is(heartbeats, 2);
  t.true(reader.terminated);
});

test('the client parser tells a cut-short stream from a complete one', (t) => {
  const complete = parseFrameStream(Buffer.concat([framed(Buffer.from('abc')), TERMINATOR]));
  t.true(complete.terminated);
  const cut = parseFrameStream(Buffer.concat([framed(Buffer.from('abc')), lengthPrefix(10), Buffer.from('xy')]));
  t.false(cut.terminated);
  t.is(cut.frames.length, 1);
  t.is(cut.leftover, 6);
  t.throws(() => parseFrameStream(Buffer.concat([TERMINATOR, framed(Buffer.from('late'))])), { message: /after the terminator/ });
});
