import test from 'ava';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CATALOGUE } from '../../config/voices.ts';
import type { PcmChunk, SynthesisRequest, VoiceProfile } from '../../core/ports/engine.ts';
import { OnnxEngine } from '../../inference/engines/onnx.ts';
import { RouterEngine } from '../../inference/engines/router.ts';
import { EspeakEngine } from '../../inference/engines/espeak.ts';
import { phonemesToIds, joinClauses } from '../../inference/engines/phoneme-ids.ts';
import { locateVoiceFiles, parseVoiceConfig, VoiceConfigError } from '../../inference/engines/piper-config.ts';
import { rmsLevel } from '../../core/speechkit/audio/pcm.ts';
import { writeTinyVoice, tinyVoiceConfig } from '../helpers/make-tiny-onnx.ts';
import { waitFor } from '../helpers/wait.ts';
import type { Logger } from '../../core/logger.ts';
import { createLocalEngine } from '../../inference/engines/factory.ts';
import { cudaProviderInstalled, logVoiceLoaded } from '../../inference/engines/onnx-session.ts';

let root = '';
let single = '';
let multi = '';
const engine = new OnnxEngine();

test.before(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'tiny-voice-'));
  single = path.join(root, 'single');
  multi = path.join(root, 'multi');
  await writeTinyVoice(single, { sampleRate: 16000 });
  await writeTinyVoice(multi, { sampleRate: 22050, numSpeakers: 3 });
});

test.after.always(async () => {
  await engine.close();
  await rm(root, { recursive: true, force: true });
});

const onnxVoice = (modelDir: string, speakerId?: number): VoiceProfile => ({
  ...CATALOGUE[0], render: { backend: 'onnx', modelDir, ...(speakerId === undefined ? {} : { speakerId }) },
});

async function render(request: SynthesisRequest) {
  const chunks: PcmChunk[] = [];
  for await (const c of engine.synthesize(request)) chunks.push(c);
  const pcm = Buffer.concat(chunks.map((c) => c.pcm));
  return { chunks, pcm, seconds: pcm.length / 2 / request.sampleRate };
}

test('Piper ids: BOS "^", pad "_" after BOS and after every phoneme, EOS "$"; unknown phonemes skipped', (t) => {
  const map = { '^': [1], '_': [0], $: [2], a: [5], b: [6] };
  t.deepEqual(phonemesToIds('ab?', map), { ids: [1, 0, 5, 0, 6, 0, 2], missing: ['?'] });
});

test('Piper ids: phonemes are NFD code points, so combining marks map on their own', (t) => {
  const map = { '^': [1], '_': [0], $: [2], t: [7], '\u032a': [8] };
  t.deepEqual(phonemesToIds('t̪', map).ids, [1, 0, 7, 0, 8, 0, 2]);
});

test('espeak clause lines are joined with commas and keep the final mark', (t) => {
  t.is(joinClauses(['sˈi1n tʃˈaː2w', 'tˈo1j'], 'Xin chào, tôi.'), 'sˈi1n tʃˈaː2w, tˈo1j.');
});

test('the voice config is read from model.onnx.json with Piper field names', (t) => {
  const cfg = parseVoiceConfig(tinyVoiceConfig({ sampleRate: 22050, numSpeakers: 3 }), 'x.json');
  t.like(cfg, { sampleRate: 22050, numSpeakers: 3, noiseScale: 0.667, lengthScale: 1, noiseW: 0.8, espeakVoice: 'vi', phonemeType: 'espeak' });
  t.deepEqual(cfg.speakerIdMap, { speaker_0: 0, speaker_1: 1, speaker_2: 2 });
});

test('a config without audio.sample_rate is refused naming the field', (t) => {
  const err = t.throws(() => parseVoiceConfig({ phoneme_id_map: { a: [1] } }, 'v.json'), { instanceOf: VoiceConfigError });
  t.regex(err!.message, /audio\.sample_rate/);
});

test('a directory without a model is refused', async (t) => {
  const empty = path.join(root, 'empty');
  await mkdir(empty, { recursive: true });
  await t.throwsAsync(locateVoiceFiles(empty), { instanceOf: VoiceConfigError });
  await writeFile(path.join(empty, 'voice.onnx'), 'x');
  await t.throwsAsync(locateVoiceFiles(empty), { message: /config\.json/ });
});

test('the tiny model loads on the CPU provider (CUDA when installed) and the session is cached', async (t) => {
  const a = await engine.preload(single);
  const b = await engine.preload(single);
  t.is(a, b);
  t.true(['cuda', 'cpu'].includes(a.provider));
  t.deepEqual([...a.inputNames].sort(), ['input', 'input_lengths', 'scales']);
});

test('onnx synthesis yields non-silent audio at the requested rate, one chunk per sentence', async (t) => {
  const { chunks, pcm } = await render({ text: 'Xin chào các bạn. Tôi là giọng thử nghiệm!', voice: onnxVoice(single), speed: 1, sampleRate: 24000 });
  t.is(chunks.length, 2);
  t.true(chunks.every((c) => c.sampleRate === 24000));
  t.true(rmsLevel(pcm) > 0.05);
});

test('output length follows the phonemes: longer text, longer audio', async (t) => {
  const short = await render({ text: 'Chào.', voice: onnxVoice(single), speed: 1, sampleRate: 16000 });
  const long = await render({ text: 'Chào buổi sáng tất cả mọi người ở đây.', voice: onnxVoice(single), speed: 1, sampleRate: 16000 });
  t.true(long.seconds > short.seconds * 2);
});

test('speed scales the length scale: speed 2 is about half as long as speed 1', async (t) => {
  const text = 'Hôm nay trời đẹp quá.';
  const normal = await render({ text, voice: onnxVoice(single), speed: 1, sampleRate: 16000 });
  const fast = await render({ text, voice: onnxVoice(single), speed: 2, sampleRate: 16000 });
  t.true(Math.abs(fast.seconds / normal.seconds - 0.5) < 0.02, `${fast.seconds} / ${normal.seconds}`);
});

test('a multi-speaker voice feeds sid: different speakers give different audio', async (t) => {
  const text = 'Xin chào.';
  const s0 = await render({ text, voice: onnxVoice(multi, 0), speed: 1, sampleRate: 22050 });
  const s2 = await render({ text, voice: onnxVoice(multi, 2), speed: 1, sampleRate: 22050 });
  t.is(s0.pcm.length, s2.pcm.length);
  t.notDeepEqual(s0.pcm, s2.pcm);
  t.true((await engine.preload(multi)).inputNames.includes('sid'));
});

test('a cue tag is a pause at the requested rate', async (t) => {
  const { pcm, seconds } = await render({ text: '[hắng giọng]', voice: onnxVoice(single), speed: 1, sampleRate: 8000 });
  t.is(seconds, 0.4);
  t.is(rmsLevel(pcm), 0);
});

test('abort between sentences throws AbortError', async (t) => {
  const controller = new AbortController();
  const text = Array.from({ length: 20 }, (_, i) => `Câu số ${i}.`).join(' ');
  await t.throwsAsync(async () => {
    for await (const _ of engine.synthesize({ text, voice: onnxVoice(single), speed: 1, sampleRate: 16000, signal: controller.signal })) {
      controller.abort();
    }
  }, { name: 'AbortError' });
});

test('a missing voice directory fails the synthesis with the directory named', async (t) => {
  await t.throwsAsync(render({ text: 'Chào.', voice: onnxVoice(path.join(root, 'nope')), speed: 1, sampleRate: 16000 }), { message: /nope/ });
});

test('the router sends onnx voices to the onnx engine and espeak voices to espeak', async (t) => {
  const router = new RouterEngine({ espeak: new EspeakEngine(), onnx: engine });
  const rates: number[] = [];
  for (const v of [onnxVoice(single), CATALOGUE[1]]) {
    for await (const c of router.synthesize({ text: 'Chào.', voice: v, speed: 1, sampleRate: 16000 })) rates.push(c.sampleRate);
  }
  t.true(rates.length >= 2 && rates.every((r) => r === 16000));
  const espeakOnly = new RouterEngine({ espeak: new EspeakEngine() });
  await t.throwsAsync(async () => {
    for await (const _ of espeakOnly.synthesize({ text: 'Chào.', voice: onnxVoice(single), speed: 1, sampleRate: 16000 })) break;
  }, { name: 'EngineUnavailableError' });
});

function recordingLogger() {
  const lines: Array<{ level: string; msg: string; fields: Record<string, unknown> }> = [];
  const log = (level: string) => (msg: string, fields: Record<string, unknown> = {}) => void lines.push({ level, msg, fields });
  const logger: Logger = { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error'), child: () => logger };
  return { logger, lines };
}

test('start-up: an engine given ONNX voices loads them at once and logs the execution provider of each', async (t) => {
  const { logger, lines } = recordingLogger();
  const local = createLocalEngine({ logger, voices: [onnxVoice(single), onnxVoice(multi, 1), onnxVoice(single)] });
  t.teardown(() => local.close());
  await waitFor(() => lines.length >= 2, { what: 'both voices to load' });
  const loaded = lines.filter((l) => l.msg.startsWith('onnx voice loaded'));
  t.deepEqual(loaded.map((l) => l.fields.modelDir).sort(), [multi, single].sort(), 'one line per voice directory');
  for (const line of loaded) {
    // This machine has no CUDA provider installed (.npmrc skips it) and no GPU: CPU, said plainly.
    t.like(line, { level: 'info', msg: 'onnx voice loaded on the cpu execution provider', fields: { provider: 'cpu', cudaProviderInstalled: cudaProviderInstalled() } });
    t.deepEqual(line.fields.requested, ['cuda', 'cpu']);
  }
});

test('a GPU pod whose voice fell back to CPU is a warning naming the missing CUDA provider', (t) => {
  const { logger, lines } = recordingLogger();
  logVoiceLoaded(logger, { dir: '/models/mai', provider: 'cpu' }, { requested: ['cuda', 'cpu'], failed: [], cudaInstalled: false, gpuPresent: true });
  logVoiceLoaded(logger, { dir: '/models/mai', provider: 'cpu' }, { requested: ['cuda', 'cpu'], failed: ['cuda: libcudnn.so.9 not found'], cudaInstalled: true, gpuPresent: true });
  logVoiceLoaded(logger, { dir: '/models/mai', provider: 'cuda' }, { requested: ['cuda', 'cpu'], failed: [], cudaInstalled: true, gpuPresent: true });
  t.like(lines[0], { level: 'warn', fields: { provider: 'cpu', gpuDevice: true, cudaProviderInstalled: false } });
  t.regex(lines[0]!.msg, /not installed in this image \(build the runtime-gpu target\)/);
  t.like(lines[1], { level: 'warn', fields: { failedProviders: ['cuda: libcudnn.so.9 not found'] } });
  t.regex(lines[1]!.msg, /CUDA provider failed to load/);
  t.like(lines[2], { level: 'info', msg: 'onnx voice loaded on the cuda execution provider' });
});
