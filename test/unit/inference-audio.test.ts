import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseWavHeader, wavData, wavFile, wavHeader, WAV_HEADER_BYTES, WavFormatError } from '../../core/speechkit/audio/wav.ts';
import { decodeMulaw, encodeMulaw, linearToMulaw } from '../../core/speechkit/audio/mulaw.ts';
import { Resampler, resamplePcm } from '../../core/speechkit/audio/resample.ts';
import { floatToPcm16, rmsLevel, SampleAligner } from '../../core/speechkit/audio/pcm.ts';
import { collectStream, encodeBuffer, encodeStream } from '../../core/speechkit/audio/encode.ts';
import { encoderAvailability, probeEncoders } from '../../core/speechkit/audio/ffmpeg.ts';
import { lameArgs, lameStream } from '../../core/speechkit/audio/lame.ts';
import { ALLOWED_SAMPLE_RATES, outputRateFor, type AudioFormat } from '../../core/speechkit/audio/formats.ts';
import { AbortError } from '../../core/speechkit/abort.ts';

const run = promisify(execFile);
const require = createRequire(import.meta.url);
const FFPROBE = (require('@ffprobe-installer/ffprobe') as { path: string }).path;

function tone(seconds: number, rate: number, freq = 440, amplitude = 0.5): Buffer {
  const n = Math.round(seconds * rate);
  const f = new Float32Array(n);
  for (let i = 0; i < n; i++) f[i] = amplitude * Math.sin((2 * Math.PI * freq * i) / rate);
  return floatToPcm16(f);
}

/** Splits a buffer at odd byte offsets, as sockets and pipes do. */
async function* pieces(buf: Buffer, sizes = [1, 999, 4097, 3, 20001]): AsyncGenerator<Buffer> {
  let offset = 0;
  for (let i = 0; offset < buf.length; i++) {
    const size = sizes[i % sizes.length];
    yield buf.subarray(offset, offset + size);
    offset += size;
  }
}

interface Probe { codec: string; sampleRate: number; channels: number; duration: number; tags: Record<string, string> }

const RAW_DEMUXERS: Partial<Record<AudioFormat, string>> = { pcm: 's16le', ulaw: 'mulaw' };

async function probe(bytes: Buffer, format: AudioFormat, rate: number): Promise<Probe> {
  const dir = await mkdtemp(path.join(tmpdir(), 'probe-'));
  try {
    const file = path.join(dir, `audio.${format}`);
    await writeFile(file, bytes);
    const raw = RAW_DEMUXERS[format];
    const args = ['-v', 'error', '-show_entries', 'stream=codec_name,sample_rate,channels,duration:format=duration:format_tags', '-of', 'json'];
    if (raw) args.push('-f', raw, '-ar', String(rate), '-ac', '1');
    const { stdout } = await run(FFPROBE, [...args, file]);
    const json = JSON.parse(stdout) as { streams: Array<Record<string, string | number>>; format: { duration?: string; tags?: Record<string, string> } };
    const s = json.streams[0];
    const duration = Number(s.duration ?? json.format.duration ?? (raw ? bytes.length / (format === 'pcm' ? 2 : 1) / rate : NaN));
    return { codec: String(s.codec_name), sampleRate: Number(s.sample_rate), channels: Number(s.channels), duration, tags: json.format.tags ?? {} };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('a zero-sample WAV is exactly 44 bytes and parses back', (t) => {
  const wav = wavFile(Buffer.alloc(0), 24000);
  t.is(wav.length, WAV_HEADER_BYTES);
  t.like(parseWavHeader(wav), { sampleRate: 24000, channels: 1, bitsPerSample: 16, audioFormat: 1, dataOffset: 44, dataBytes: 0 });
});

test('the WAV parser walks past LIST chunks and reports the data offset', (t) => {
  const fmt = wavHeader(4, 16000).subarray(12, 36);
  const list = Buffer.concat([Buffer.from('LIST'), Buffer.from([5, 0, 0, 0]), Buffer.from('abcde'), Buffer.from([0])]);
  const data = Buffer.concat([Buffer.from('data'), Buffer.from([4, 0, 0, 0]), Buffer.from([1, 0, 2, 0])]);
  const riff = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVE'), fmt, list, data]);
  const { info, data: samples } = wavData(riff);
  t.is(info.sampleRate, 16000);
  t.deepEqual([...samples], [1, 0, 2, 0]);
});

test('the WAV parser asks for more bytes on a truncated header and rejects non-WAV input', (t) => {
  t.is(parseWavHeader(wavHeader(0, 8000).subarray(0, 30)), null);
  t.throws(() => parseWavHeader(Buffer.from('OggS0000000000000000')), { instanceOf: WavFormatError });
});

test('a streamed WAV header carries a placeholder size that players read to the end', (t) => {
  const h = wavHeader(null, 48000);
  t.is(h.length, 44);
  t.true(h.readUInt32LE(40) > 1e9);
});

test('mu-law follows G.711: silence is 0xFF, full scale positive 0x80 and negative 0x00', (t) => {
  t.is(linearToMulaw(0), 0xff);
  t.is(linearToMulaw(32767), 0x80);
  t.is(linearToMulaw(-32768), 0x00);
});

test('mu-law round trip stays within the quantisation step', (t) => {
  const pcm = tone(0.05, 8000, 300, 0.9);
  const back = decodeMulaw(encodeMulaw(pcm));
  t.is(back.length, pcm.length);
  for (let i = 0; i < pcm.length; i += 2) {
    const a = pcm.readInt16LE(i);
    t.true(Math.abs(a - back.readInt16LE(i)) <= Math.max(8, Math.abs(a) * 0.07), `sample ${i / 2}`);
  }
});

test('the resampler gives the same samples streamed in odd-sized chunks as in one buffer', (t) => {
  const pcm = tone(0.3, 22050);
  const whole = resamplePcm(pcm, 22050, 48000);
  const r = new Resampler(22050, 48000);
  const parts: Buffer[] = [];
  for (let o = 0, i = 0; o < pcm.length; i++) {
    const size = [1, 777, 2, 1501][i % 4];
    parts.push(r.push(pcm.subarray(o, o + size)));
    o += size;
  }
  parts.push(r.flush());
  t.deepEqual(Buffer.concat(parts), whole);
});

for (const [from, to] of [[22050, 8000], [22050, 48000], [16000, 24000], [48000, 48000]]) {
  test(`the resampler output length follows the rate ratio: ${from} → ${to}`, (t) => {
    const n = 22050;
    const out = resamplePcm(tone(n / from, from), from, to);
    t.true(Math.abs(out.length / 2 - (n * to) / from) <= 2);
    t.true(Math.abs(rmsLevel(out) - 0.5 / Math.SQRT2) < 0.02, 'level is preserved');
  });
}

test('the sample aligner carries a split sample over to the next chunk', (t) => {
  const a = new SampleAligner();
  t.is(a.push(Buffer.from([1, 2, 3])).length, 2);
  t.true(a.pending);
  t.deepEqual([...a.push(Buffer.from([4]))], [3, 4]);
});

test('ffmpeg is present and executable, and every format has an encoder', async (t) => {
  const availability = encoderAvailability();
  t.truthy(availability.ffmpeg);
  t.deepEqual(Object.values(availability.formats), [true, true, true, true, true]);
  t.deepEqual(await probeEncoders(), { mp3: true, opus: true, wav: true, pcm: true, ulaw: true });
});

const EXPECTED_CODEC: Record<AudioFormat, string> = { mp3: 'mp3', opus: 'opus', wav: 'pcm_s16le', pcm: 'pcm_s16le', ulaw: 'pcm_mulaw' };
const MATRIX: Array<[AudioFormat, number]> = [
  ...(['wav', 'pcm', 'mp3'] as const).flatMap((f) => ALLOWED_SAMPLE_RATES.map((r): [AudioFormat, number] => [f, r])),
  ['opus', 24000], ['opus', 48000], ['ulaw', 8000], ['ulaw', 48000],
];

for (const [format, requested] of MATRIX) {
  const actual = outputRateFor(format, requested);
  test(`streamed ${format} asked at ${requested} Hz decodes as ${EXPECTED_CODEC[format]}, ${actual} Hz, mono, same duration`, async (t) => {
    const seconds = 1.5;
    const bytes = await collectStream(encodeStream(pieces(tone(seconds, 22050)), { inputRate: 22050, format, outputRate: requested }));
    const p = await probe(bytes, format, actual);
    t.is(p.codec, EXPECTED_CODEC[format]);
    t.is(p.sampleRate, actual);
    t.is(p.channels, 1);
    // Lossy codecs pad a frame or two at each end.
    t.true(Math.abs(p.duration - seconds) < (format === 'mp3' || format === 'opus' ? 0.2 : 0.01), `duration ${p.duration}`);
  });
}

test('opus is always 48000 Hz and ulaw always 8000 Hz whatever is asked', (t) => {
  t.is(outputRateFor('opus', 16000), 48000);
  t.is(outputRateFor('ulaw', 44100), 8000);
  t.is(outputRateFor('mp3'), 48000);
});

test('encodeBuffer writes a WAV whose header states the exact data length', async (t) => {
  const wav = await encodeBuffer(tone(0.5, 22050), { inputRate: 22050, format: 'wav', outputRate: 16000 });
  const info = parseWavHeader(wav)!;
  t.is(info.dataBytes, wav.length - 44);
  t.is(info.sampleRate, 16000);
  t.is(info.dataBytes, 8000 * 2);
});

test('encodeBuffer produces MP3 for a short clip', async (t) => {
  const mp3 = await encodeBuffer(tone(0.5, 24000), { inputRate: 24000, format: 'mp3', outputRate: 24000 });
  const p = await probe(mp3, 'mp3', 24000);
  t.is(p.codec, 'mp3');
  t.is(p.sampleRate, 24000);
});

for (const format of ['mp3', 'wav'] as const) {
  test(`a source error reaches the ${format} stream consumer as the same error`, async (t) => {
    async function* failing() {
      yield tone(0.2, 22050);
      throw new AbortError();
    }
    await t.throwsAsync(collectStream(encodeStream(failing(), { inputRate: 22050, format })), { name: 'AbortError' });
  });
}

test('destroying an ffmpeg-encoded stream stops the PCM source', async (t) => {
  let finished = false;
  async function* endless() {
    try {
      for (;;) yield tone(0.1, 22050);
    } finally {
      finished = true;
    }
  }
  const stream = encodeStream(endless(), { inputRate: 22050, format: 'opus' });
  for await (const _ of stream) break;
  await new Promise((r) => setTimeout(r, 200));
  t.true(finished);
});

test.serial('mp3 goes through Debian\'s lame when it is installed, and through ffmpeg when it is not', async (t) => {
  const availability = encoderAvailability();
  if (!availability.lame) {
    console.log('lame is not installed (apt-get install lame; .ci/run does): only the ffmpeg path is exercised');
  }
  const savedPath = process.env.PATH;
  try {
    process.env.PATH = '/nonexistent';
    const viaFfmpeg = await collectStream(encodeStream(pieces(tone(1, 22050)), { inputRate: 22050, format: 'mp3', outputRate: 48000 }));
    const p = await probe(viaFfmpeg, 'mp3', 48000);
    t.is(p.codec, 'mp3');
    t.is(p.sampleRate, 48000);
  } finally {
    process.env.PATH = savedPath;
  }
  if (availability.lame) {
    t.deepEqual(lameArgs(22050, 128).slice(0, 4), ['--quiet', '-r', '-s', '22.05']);
    const viaLame = await collectStream(lameStream(pieces(tone(1, 48000)), 48000, 128));
    const p = await probe(viaLame, 'mp3', 48000);
    t.is(p.codec, 'mp3');
    t.is(p.sampleRate, 48000);
    t.true(Math.abs(p.duration - 1) < 0.1, `duration ${p.duration}`);
  }
});
