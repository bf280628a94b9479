import test from 'ava';
import { CATALOGUE } from '../../config/voices.ts';
import type { JobRecord } from '../../core/ports/jobs.ts';
import { EngineUnavailableError } from '../../core/ports/engine.ts';
import { ApiError } from '../../core/errors.ts';
import { EspeakEngine } from '../../inference/engines/espeak.ts';
import { AbortError } from '../../core/speechkit/abort.ts';
import { classifyRenderError, renderJobToBlob, JOB_SAMPLE_RATE, NoAudioError } from '../../inference/render.ts';
import { createDirectoryBlobs } from '../../core/adapters/blobs/directory.ts';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseWavHeader } from '../../core/speechkit/audio/wav.ts';

const engine = new EspeakEngine();
const blobs = createDirectoryBlobs(mkdtempSync(path.join(tmpdir(), 'render-')));
const services = {
  engine,
  blobs,
  config: { moderationTerms: ['ma túy'] },
  catalog: { resolve: async () => CATALOGUE[0] },
} as unknown as Parameters<typeof renderJobToBlob>[0];

const job = (over: Partial<JobRecord>) => ({ voiceId: CATALOGUE[0].id, engine: 'v4', accountId: 'acc', speed: 1, aiRefine: false, text: '', ...over }) as JobRecord;

async function stored(key: string): Promise<Buffer> {
  const blob = (await blobs.open(key))!;
  const parts: Buffer[] = [];
  for await (const part of blob.stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

test('a job renders to a stored 48 kHz WAV whose duration matches its data; the scratch PCM is gone', async (t) => {
  const audio = await renderJobToBlob(services, job({ text: 'Ngày 21/11/2026, giá $5 [cười] nhé.' }), 'jobs/a.wav');
  const wav = await stored('jobs/a.wav');
  const info = parseWavHeader(wav)!;
  t.is(info.sampleRate, JOB_SAMPLE_RATE);
  t.is(info.dataBytes, wav.length - 44);
  t.true(Math.abs(audio.durationSeconds - info.dataBytes / 2 / JOB_SAMPLE_RATE) < 1e-9);
  t.true(audio.durationSeconds > 2);
  t.false(await blobs.exists('jobs/a.wav.pcm.part'));
});

test('SPEC billing rule 3: a job whose text has nothing speakable fails for good (and is refunded), nothing is stored', async (t) => {
  const err = await t.throwsAsync(renderJobToBlob(services, job({ text: '[music] ...' }), 'jobs/b.wav'), { instanceOf: NoAudioError });
  t.like(classifyRenderError(err), { code: 'synthesis_failed', retryable: false });
  t.false(await blobs.exists('jobs/b.wav'));
  t.false(await blobs.exists('jobs/b.wav.pcm.part'));
});

test('SPEC billing rule 3: an engine that returns no samples fails the job for good, nothing is stored', async (t) => {
  const silent = { ...services, engine: { async *synthesize() {} } } as unknown as typeof services;
  const err = await t.throwsAsync(renderJobToBlob(silent, job({ text: 'Xin chào các bạn.' }), 'jobs/silent.wav'), { instanceOf: NoAudioError });
  t.like(classifyRenderError(err), { code: 'synthesis_failed', retryable: false });
  t.false(await blobs.exists('jobs/silent.wav'));
});

test('an aiRefine job with moderated text fails as content_rejected, not retried', async (t) => {
  const err = await t.throwsAsync(renderJobToBlob(services, job({ text: 'buôn ma túy', aiRefine: true }), 'jobs/c.wav'));
  t.deepEqual(classifyRenderError(err), { code: 'content_rejected', message: 'The text was refused by content moderation.', retryable: false });
});

test('render failures are classified: unavailable and timeouts retry, refusals do not', (t) => {
  t.like(classifyRenderError(new EngineUnavailableError('down')), { code: 'synthesis_unavailable', retryable: true });
  t.like(classifyRenderError(new AbortError()), { code: 'synthesis_timeout', retryable: true });
  t.like(classifyRenderError(new ApiError(400, 'Unknown voice')), { code: 'synthesis_failed', retryable: false });
  t.like(classifyRenderError(new Error('espeak-ng exited with 1')), { code: 'synthesis_failed', retryable: true });
});

test('a failed job never shows its owner the engine\'s internals (binary, exit code, stderr, hosts, paths); refusals and nothing-to-speak keep their words', (t) => {
  const internal = [
    new Error('espeak-ng exited with 1: simulated failure'),
    new EngineUnavailableError('inference service at http://10.0.0.7:8000 unreachable: ECONNREFUSED'),
    new RangeError('invalid blob key: "jobs/x"'),
    Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' }),
    Object.assign(new Error('connection 4 to 127.0.0.1:27017 closed'), { name: 'MongoNetworkError' }),
  ];
  for (const err of internal) {
    const { message } = classifyRenderError(err);
    t.false(/espeak|exited|stderr|10\.0\.0\.7|127\.0\.0\.1|ECONN|blob key|aborted due/.test(message), message);
    t.regex(message, /Submit the text again/);
  }
  t.is(classifyRenderError(new ApiError(400, 'Unknown voice')).message, 'Unknown voice');
  t.is(classifyRenderError(new NoAudioError('The engine produced no audio for this text.')).message, 'The engine produced no audio for this text.');
});

test('a store out of reach or a full disk is an outage the job waits out, not one of its attempts; an engine down stays an attempt', (t) => {
  t.like(classifyRenderError(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })), { retryable: true, outage: true });
  t.like(classifyRenderError(Object.assign(new Error('connection 4 to 127.0.0.1:27017 closed'), { name: 'MongoNetworkError' })), { retryable: true, outage: true });
  t.is(classifyRenderError(Object.assign(new EngineUnavailableError('down'), { cause: Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }) })).outage, undefined);
  t.is(classifyRenderError(new Error('espeak-ng exited with 1')).outage, undefined);
});

test('a store that fails before reading anything (its folder is a file) fails the render with its error; nothing waits on the write or goes unhandled', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'render-eexist-'));
  const broken = createDirectoryBlobs(dir);
  await broken.put('keep/x', Buffer.from('x'), 'text/plain');
  // The folder the job's scratch PCM goes into is a plain file: the put fails at its mkdir, before its pipeline.
  writeFileSync(path.join(dir, 'data', 'jobs'), 'not a folder');
  const long = 'Một câu khá dài để bộ máy đọc sinh ra nhiều âm thanh hơn một bộ đệm. '.repeat(20);
  const err = await t.throwsAsync(
    Promise.race([
      renderJobToBlob({ ...services, blobs: broken } as typeof services, job({ text: long }), 'jobs/eexist.wav'),
      new Promise((_, reject) => setTimeout(() => reject(new Error('the render hung')), 20_000)),
    ]),
  );
  t.regex((err as NodeJS.ErrnoException).code ?? '', /^(EEXIST|ENOTDIR)$/, String(err));
});

test('a store that fails mid-write ends the render with the store\'s error instead of waiting forever for it to read on', async (t) => {
  const full = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  // Reads a little of the scratch PCM, then fails as a full disk does: the stream it read is destroyed.
  const failing = {
    ...blobs,
    async put(_key: string, data: NodeJS.ReadableStream) {
      for await (const _part of data) break;
      throw full;
    },
  };
  const long = 'Một câu khá dài để bộ máy đọc sinh ra nhiều âm thanh hơn một bộ đệm. '.repeat(20);
  const err = await t.throwsAsync(
    Promise.race([
      renderJobToBlob({ ...services, blobs: failing } as typeof services, job({ text: long }), 'jobs/full.wav'),
      new Promise((_, reject) => setTimeout(() => reject(new Error('the render hung')), 20_000)),
    ]),
  );
  t.is(err, full);
  t.like(classifyRenderError(err), { outage: true });
});
