import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { probeUpload, UnsupportedAudioError, type UploadAudioType } from '../../core/speechkit/audio/probe.ts';
import { decodeToPcm } from '../../core/speechkit/audio/decode.ts';
import { encodeWav, type RecordingFormat } from '../helpers/recordings.ts';
import { wavFile } from '../../core/speechkit/audio/wav.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'probe-upload-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

function tone(seconds: number, rate = 48000): Buffer {
  const pcm = Buffer.alloc(Math.round(seconds * rate) * 2);
  for (let i = 0; i < pcm.length / 2; i++) pcm.writeInt16LE(Math.round(Math.sin((2 * Math.PI * 300 * i) / rate) * 8000), i * 2);
  return wavFile(pcm, rate);
}

const FORMATS: Array<[RecordingFormat, UploadAudioType]> = [
  ['wav', 'wav'], ['mp3', 'mp3'], ['m4a', 'm4a'], ['aac', 'aac'], ['ogg', 'ogg'], ['flac', 'flac'], ['webm', 'webm'],
];

for (const [format, type] of FORMATS) {
  test(`accepted upload: ${format} is recognised from its content (saved without an extension) with its duration`, async (t) => {
    const file = path.join(dir, `upload-${format}`);
    writeFileSync(file, await encodeWav(tone(2), format));
    const probed = await probeUpload(file);
    t.is(probed.type, type);
    t.true(Math.abs(probed.seconds - 2) <= 0.1, `${probed.seconds}s`);
    const pcm = await decodeToPcm(file, 16000);
    t.true(Math.abs(pcm.length / 2 / 16000 - 2) <= 0.1);
  });
}

/** A WAV header that declares PCM with 0 bits per sample: ffprobe names a stream, ffmpeg cannot decode it. */
function zeroBitWav(): Buffer {
  const header = wavFile(Buffer.alloc(0), 16000);
  header.writeUInt32LE(1000, 40); // data size
  header.writeUInt32LE(0, 28); // byte rate
  header.writeUInt16LE(0, 32); // block align
  header.writeUInt16LE(0, 34); // bits per sample
  return Buffer.concat([header, Buffer.alloc(1000, 0x11)]);
}

test('refused uploads: text, a PNG image, random bytes, a WAV declaring 0 bits per sample (it was a 500)', async (t) => {
  const cases: Array<[string, Buffer]> = [
    ['zero-bits.wav', zeroBitWav()],
    ['text.mp3', Buffer.from('Xin chào, đây là văn bản.\n'.repeat(100))],
    ['random.wav', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256))],
    ['image.ogg', Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a4f30000000049454e44ae426082', 'hex')],
  ];
  for (const [name, bytes] of cases) {
    const file = path.join(dir, name);
    writeFileSync(file, bytes);
    await t.throwsAsync(() => probeUpload(file), { instanceOf: UnsupportedAudioError }, name);
  }
});
