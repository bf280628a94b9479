/**
 * Streaming latency benchmark: `npx tsx test/bench/speech-ttfb.ts [runs]`.
 *
 * Starts the platform in this process (embedded adapters, espeak-ng engine)
 * and measures, over keep-alive HTTP:
 * - time to the first audio byte of `POST /tts/stream` (WAV frames) and of
 *   `POST /audio/speech` with `stream_format: "audio"` (PCM), for a
 *   200-character Vietnamese text: p50 and p95 over `runs` requests each;
 * - the real-time factor (synthesis wall time / audio seconds);
 * - peak RSS growth while one 50,000-character text streams through
 *   `POST /tts/stream` and the client discards what it reads.
 * Exits 1 when the TTFB median of either route is above 150 ms or the RSS
 * growth reaches 50 MB.
 */
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startSpeechPlatform } from '../helpers/speech.ts';
import type { TestPlatform } from '../helpers/platform.ts';

v8.setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const RUNS = Math.max(20, Number(process.argv[2] ?? 30));
const WARMUP = 3;
const TTFB_TARGET_MS = 150;
const RSS_LIMIT_MB = 50;
const LONG_CHARS = 50_000;

/** 200 characters of ordinary Vietnamese prose with a date and numbers. */
const TEXT_200 =
  'Sáng nay, ngày 15 tháng 3, trời Hà Nội se lạnh và có mưa phùn nhẹ. Người dân đi làm sớm hơn thường lệ để tránh tắc đường, còn các quán phở ven Hồ Gươm đã đông khách từ lúc sáu giờ kém mười lăm phút.';

function longText(chars: number): string {
  const sentences = [
    'Buổi chiều ở làng quê yên bình, lũ trẻ chạy nhảy trên con đường đất đỏ dẫn ra cánh đồng lúa chín vàng.',
    'Bà kể rằng ngày xưa, mỗi mùa gặt, cả xóm cùng nhau ra đồng từ khi trời còn tối, mang theo cơm nắm và ấm trà xanh.',
    'Tiếng máy cày xa xa hòa với tiếng chim hót, tạo nên một bản nhạc quen thuộc mà ai đi xa cũng nhớ.',
  ];
  const out: string[] = [];
  let length = 0;
  for (let i = 0; length < chars; i++) {
    const s = sentences[i % sentences.length];
    out.push(s);
    length += s.length + 1;
  }
  return out.join(' ').slice(0, chars);
}

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};
const mb = (bytes: number) => bytes / 1024 / 1024;

interface Timing {
  ttfbMs: number;
  totalMs: number;
  audioSeconds: number;
}

/** Posts and reads the body to its end; the first body chunk marks the first audio byte. */
async function timed(p: TestPlatform, path: string, json: unknown, apiKey: string, bytesToSeconds: (bytes: number) => number): Promise<Timing> {
  const started = performance.now();
  const res = await p.api(path, { method: 'POST', key: apiKey, json });
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
  let ttfbMs = 0;
  let bytes = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    if (!ttfbMs) ttfbMs = performance.now() - started;
    bytes += chunk.byteLength;
  }
  return { ttfbMs, totalMs: performance.now() - started, audioSeconds: bytesToSeconds(bytes) };
}

/** WAV frames at 48 kHz: frame headers and WAV headers are small next to the samples. */
const wavFrameSeconds = (bytes: number) => bytes / 2 / 48_000;
const pcm24Seconds = (bytes: number) => bytes / 2 / 24_000;

async function measure(p: TestPlatform, name: string, path: string, json: unknown, toSeconds: (bytes: number) => number): Promise<{ p50: number; ok: boolean }> {
  const { apiKey } = await p.bootstrap({ grant: { totalTokens: 100_000_000 } });
  for (let i = 0; i < WARMUP; i++) await timed(p, path, json, apiKey, toSeconds);
  const runs: Timing[] = [];
  for (let i = 0; i < RUNS; i++) runs.push(await timed(p, path, json, apiKey, toSeconds));
  const ttfb = runs.map((r) => r.ttfbMs);
  const rtf = runs.map((r) => r.totalMs / 1000 / r.audioSeconds);
  const p50 = percentile(ttfb, 50);
  console.log(
    `${name}: TTFB p50 ${p50.toFixed(1)} ms, p95 ${percentile(ttfb, 95).toFixed(1)} ms over ${RUNS} runs; ` +
      `${runs[0].audioSeconds.toFixed(1)} s of audio, real-time factor p50 ${percentile(rtf, 50).toFixed(4)}`,
  );
  return { p50, ok: p50 <= TTFB_TARGET_MS };
}

async function longStreamRss(p: TestPlatform): Promise<{ growthMb: number; ok: boolean }> {
  const { apiKey } = await p.bootstrap({ grant: { totalTokens: 100_000_000 } });
  gc();
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  const text = longText(LONG_CHARS);
  const timing = await timed(p, '/tts/stream', { text }, apiKey, wavFrameSeconds);
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  const growthMb = mb(peak - baseline);
  console.log(
    `/tts/stream ${text.length} characters: ${(timing.audioSeconds / 60).toFixed(1)} min of audio in ${(timing.totalMs / 1000).toFixed(1)} s ` +
      `(real-time factor ${(timing.totalMs / 1000 / timing.audioSeconds).toFixed(4)}), first audio after ${timing.ttfbMs.toFixed(0)} ms; ` +
      `peak RSS growth ${growthMb.toFixed(1)} MB (baseline ${mb(baseline).toFixed(0)} MB)`,
  );
  return { growthMb, ok: growthMb < RSS_LIMIT_MB };
}

async function main(): Promise<void> {
  const p = await startSpeechPlatform({ RATE_SPEECH_PER_MINUTE: '100000', EDGE_STREAM_REQUESTS_PER_MINUTE: '0', EDGE_REQUESTS_PER_MINUTE: '0' });
  try {
    console.log(`text: ${[...TEXT_200].length} characters; engine espeak-ng; ${RUNS} runs after ${WARMUP} warm-up runs per route`);
    const stream = await measure(p, 'POST /tts/stream (wav)', '/tts/stream', { text: TEXT_200 }, wavFrameSeconds);
    const speech = await measure(p, 'POST /audio/speech stream_format audio (pcm)', '/audio/speech',
      { input: TEXT_200, response_format: 'pcm', stream_format: 'audio' }, pcm24Seconds);
    const rss = await longStreamRss(p);
    const failures = [
      !stream.ok && `/tts/stream TTFB median ${stream.p50.toFixed(1)} ms > ${TTFB_TARGET_MS} ms`,
      !speech.ok && `/audio/speech TTFB median ${speech.p50.toFixed(1)} ms > ${TTFB_TARGET_MS} ms`,
      !rss.ok && `RSS growth ${rss.growthMb.toFixed(1)} MB >= ${RSS_LIMIT_MB} MB`,
    ].filter(Boolean);
    console.log(failures.length ? `FAIL: ${failures.join('; ')}` : 'PASS: all targets met');
    process.exitCode = failures.length ? 1 : 0;
  } finally {
    await p.stop();
  }
}

await main();
