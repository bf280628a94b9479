/**
 * Issue 17: what one speech request costs next to the bare engine, measured
 * in the same run. `npx tsx test/bench/speech-cpu.ts [rounds]`.
 *
 * The API runs in its own process (`core/main.ts`, ROLES=api, embedded
 * adapters, espeak-ng in process) so its CPU — its own threads plus every
 * espeak-ng and encoder child it reaped — is read from /proc. The bare
 * baselines run from this process: espeak-ng alone, and the shell pipeline
 * `espeak-ng | lame` (128 kbps mono, resampled to 48 kHz by lame) with the
 * same voice arguments. For each of `rounds` rounds (default 3), in
 * alternation, so both sides see the same machine load:
 *   - CPU per 200-character request, sequential (pcm stream at 24 kHz, the
 *     route's pcm default; mp3 at 48 kHz);
 *   - time to first byte;
 *   - characters per second with 8 requests at a time.
 * Figures are medians over rounds. Then the server's RSS growth over 1,000
 * more requests (one in five mp3), 8 at a time. Exits 1 when a target is
 * missed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnServer } from './lib.ts';
import {
  CHARS_200, ESPEAK_ARGS, TEXT_200, cpuPerRun, fmt, median, post, report, rssMb, runEspeak, runPipeline, throughput, type Timed,
} from './speech-lib.ts';
import { findExecutable } from '../../core/speechkit/audio/binaries.ts';
import { encoderAvailability } from '../../core/speechkit/audio/ffmpeg.ts';

const ROUNDS = Math.max(1, Number(process.argv[2] ?? 3));
const SEQUENTIAL = 30;
const CONCURRENCY = 8;
const SECONDS = 6;
const ADMIN = 'bench-admin-token-0123456789';

const lame = findExecutable('lame');
const espeakCmd = `espeak-ng ${ESPEAK_ARGS.join(' ')} --stdin`;
const systemFfmpeg = findExecutable('ffmpeg');
const bundledFfmpeg = encoderAvailability().ffmpeg;
const ffmpegArgs = '-v error -i - -ar 48000 -ac 1 -c:a libmp3lame -b:a 128k -f mp3 -';
/** The same encode (13 s of speech, 22,050 → 48,000 Hz, 128 kbps mono) through each encoder this machine has. */
const encoderPipelines: Record<string, string | null> = {
  'espeak-ng | lame (Debian)': lame ? `${espeakCmd} | ${lame} --quiet -m m -b 128 --resample 48 - -` : null,
  'espeak-ng | ffmpeg (Debian)': systemFfmpeg && systemFfmpeg !== bundledFfmpeg ? `${espeakCmd} | ${systemFfmpeg} ${ffmpegArgs}` : null,
  'espeak-ng | ffmpeg (bundled static build)': bundledFfmpeg ? `${espeakCmd} | ${bundledFfmpeg} ${ffmpegArgs}` : null,
};

const dataDir = mkdtempSync(path.join(tmpdir(), 'vieneu-bench-'));
const server = await spawnServer('core/main.ts', {
  DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ADMIN_TOKEN: ADMIN, ROLES: 'api',
  RATE_SPEECH_PER_MINUTE: '100000000', STREAM_CAPACITY: '1000', STREAMS_PER_GRANT: '1000',
});
const pid = server.child.pid!;
try {
  const boot = await fetch(`${server.url}/admin/v1/bootstrap`, {
    method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench', grant: { totalTokens: 2_000_000_000 } }),
  });
  const { apiKey } = (await boot.json()) as { apiKey: string };
  const auth = { authorization: `Bearer ${apiKey}` };
  const speech = (body: Record<string, unknown>) => () => post(`${server.url}/api/v1/audio/speech`, auth, { input: TEXT_200, voice: 'vi-north-female-mai', ...body });
  const apiPcm = speech({ response_format: 'pcm', stream_format: 'audio' });
  const apiMp3 = speech({ response_format: 'mp3', sample_rate: 48000 });
  const bare = () => runEspeak(TEXT_200);
  const mp3Pipeline = encoderPipelines['espeak-ng | lame (Debian)'];

  const check = async (what: string, one: () => Promise<Timed>) => {
    const r = await one();
    if (r.status !== 200 && r.status !== 0) throw new Error(`${what} answered ${r.status}`);
  };
  await check('pcm', apiPcm);
  await check('mp3', apiMp3);
  // warm-up: JIT, SQLite page cache, espeak-ng's data files in the page cache
  for (let i = 0; i < 10; i++) await Promise.all([apiPcm(), apiMp3(), bare()]);

  const rows: Record<string, number[]> = {};
  const push = (k: string, v: number) => (rows[k] ??= []).push(v);
  for (let round = 0; round < ROUNDS; round++) {
    // This process does nothing but run espeak-ng meanwhile: its own CPU is what running the engine from Node costs.
    const b = await cpuPerRun(SEQUENTIAL, process.pid, bare);
    push('bare.alone', (await cpuPerRun(SEQUENTIAL, process.pid, bare, true)).cpuMs);
    const p = await cpuPerRun(SEQUENTIAL, pid, apiPcm);
    const m = await cpuPerRun(Math.ceil(SEQUENTIAL / 3), pid, apiMp3);
    push('bare.cpu', b.cpuMs); push('bare.ttfb', median(b.ttfb));
    push('pcm.cpu', p.cpuMs); push('pcm.ttfb', median(p.ttfb));
    push('mp3.cpu', m.cpuMs);
    if (mp3Pipeline) push('pipe.cpu', (await cpuPerRun(Math.ceil(SEQUENTIAL / 3), process.pid, () => runPipeline(mp3Pipeline, TEXT_200))).cpuMs);
    push('bare.tput', (await throughput(CONCURRENCY, SECONDS, CHARS_200, bare)).charsPerSecond);
    push('pcm.tput', (await throughput(CONCURRENCY, SECONDS, CHARS_200, apiPcm)).charsPerSecond);
    if (mp3Pipeline) push('pipe.tput', (await throughput(CONCURRENCY, SECONDS, CHARS_200, () => runPipeline(mp3Pipeline, TEXT_200))).charsPerSecond);
    push('mp3.tput', (await throughput(CONCURRENCY, SECONDS, CHARS_200, apiMp3)).charsPerSecond);
    console.log(`round ${round + 1}: ${Object.entries(rows).map(([k, v]) => `${k} ${fmt(v[v.length - 1], 1)}`).join(', ')}`);
  }
  console.log('\nencoders, CPU per 200-character request of the whole pipeline (espeak-ng included), 10 sequential runs:');
  for (const [name, command] of Object.entries(encoderPipelines)) {
    if (!command) {
      console.log(`  ${name}: not installed`);
      continue;
    }
    console.log(`  ${name}: ${fmt((await cpuPerRun(10, process.pid, () => runPipeline(command, TEXT_200), true)).cpuMs, 1)} ms`);
  }

  const rssBefore = rssMb(pid);
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < 1000) await (next++ % 5 === 4 ? apiMp3() : apiPcm());
  }));
  await new Promise((r) => setTimeout(r, 500));
  const rssAfter = rssMb(pid);
  const med = (k: string) => median(rows[k] ?? [NaN]);
  const ttfbGoal = 2 * med('bare.ttfb') + 10;
  const verdicts = [
    { name: 'CPU per 200-character pcm request (24 kHz)', measured: `${fmt(med('pcm.cpu'), 1)} ms`, baseline: `espeak-ng run from Node ${fmt(med('bare.cpu'), 1)} ms (the espeak-ng process alone ${fmt(med('bare.alone'), 1)} ms)`, target: `≤ 1.5× (${fmt(1.5 * med('bare.cpu'), 1)} ms)`, ok: med('pcm.cpu') <= 1.5 * med('bare.cpu') },
    { name: '8 concurrent pcm, characters/s', measured: fmt(med('pcm.tput')), baseline: `espeak-ng ${fmt(med('bare.tput'))}`, target: `≥ 0.6× (ratio ${fmt(med('pcm.tput') / med('bare.tput'), 2)})`, ok: med('pcm.tput') >= 0.6 * med('bare.tput') },
    { name: 'time to first byte, pcm', measured: `${fmt(med('pcm.ttfb'), 1)} ms`, baseline: `espeak-ng ${fmt(med('bare.ttfb'), 1)} ms`, target: `≤ 2× + 10 ms (${fmt(ttfbGoal, 1)} ms)`, ok: med('pcm.ttfb') <= ttfbGoal },
    { name: '8 concurrent mp3 48 kHz 128 kbps, characters/s', measured: fmt(med('mp3.tput')), baseline: mp3Pipeline ? `espeak-ng \\| lame ${fmt(med('pipe.tput'))}` : 'lame not installed', target: `≥ 0.8× (ratio ${fmt(med('mp3.tput') / med('pipe.tput'), 2)})`, ok: med('mp3.tput') >= 0.8 * med('pipe.tput') },
    { name: 'server RSS growth over 1,000 requests', measured: `${fmt(rssAfter - rssBefore, 1)} MB`, baseline: `${fmt(rssBefore)} MB before`, target: '< 50 MB', ok: rssAfter - rssBefore < 50 },
  ];
  console.log(`\nCPU per mp3 request (48 kHz, 128 kbps): ${fmt(med('mp3.cpu'), 1)} ms = ${fmt(med('mp3.cpu') / med('bare.cpu'), 1)}× bare espeak-ng; the bare pipeline espeak-ng | lame run from Node: ${fmt(med('pipe.cpu'), 1)} ms`);
  console.log(`${ROUNDS} rounds, medians; ${SEQUENTIAL} sequential requests per CPU figure, ${CONCURRENCY} at a time for ${SECONDS} s per throughput figure; text ${CHARS_200} characters`);
  const ok = report(verdicts);
  console.log(ok ? 'PASS: all speech-efficiency targets met' : 'FAIL: a speech-efficiency target was missed');
  process.exitCode = ok ? 0 : 1;
} finally {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
