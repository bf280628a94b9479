import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from '../../core/logger.ts';
import { checkVoices } from '../../inference/gpu-check.ts';
import { writeTinyVoice } from '../helpers/make-tiny-onnx.ts';

let root = '';
let voiceDir = '';
const lines: string[] = [];
const logger: Logger = {
  debug: () => {}, info: (msg) => lines.push(msg), warn: (msg) => lines.push(msg), error: (msg) => lines.push(msg), child: () => logger,
};

test.before(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'gpu-check-'));
  voiceDir = path.join(root, 'voice');
  await writeTinyVoice(voiceDir, { sampleRate: 16000 });
});
test.after.always(() => rm(root, { recursive: true, force: true }));

test('gpu-check: a voice on a host without a GPU speaks on the cpu provider and passes', async (t) => {
  const report = await checkVoices([voiceDir], { logger, gpuPresent: false });
  t.true(report.ok);
  t.is(report.voices[0].provider, 'cpu');
  t.true(report.voices[0].audioSeconds > 1);
  t.true(lines.includes('onnx voice loaded on the cpu execution provider'));
});

test('gpu-check: on a GPU host a voice left on the cpu provider fails the check, and a missing voice is reported, not thrown', async (t) => {
  const report = await checkVoices([voiceDir, path.join(root, 'absent')], { logger, gpuPresent: true });
  t.false(report.ok);
  t.like(report.voices[0], { provider: 'cpu', ok: false });
  t.like(report.voices[1], { provider: 'none', ok: false });
  t.truthy(report.voices[1].error);
});

test('gpu-check: the command prints one JSON summary and exits 2 without voices', async (t) => {
  const run = promisify(execFile);
  const script = path.resolve('inference/gpu-check.ts');
  // Exits 1 on a GPU host whose image lacks the CUDA provider; the summary is printed either way.
  const { stdout } = await run(process.execPath, ['--import=tsx', script, voiceDir]).catch((err: { stdout: string }) => err);
  const summary = JSON.parse(stdout.trim().split('\n').at(-1)!);
  t.is(summary.voices[0].modelDir, voiceDir);
  const usage = await run(process.execPath, ['--import=tsx', script]).catch((err: { code: number }) => err);
  t.is((usage as { code: number }).code, 2);
});
