import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { startTestPlatform, type TestPlatform } from './platform.ts';
import { waitFor } from './wait.ts';

/** The plugins the audiobook tests need (jobs for the API traffic that pauses books). */
export const AUDIOBOOK_PLUGINS = 'catalog,account,speech,jobs,audiobooks';

/** Settings that make a whole book, its retries and mastering run in seconds. */
export const FAST_BOOKS: Record<string, string> = {
  AUDIOBOOK_TICK_MS: '50',
  AUDIOBOOK_PART_CHARS: '120',
  AUDIOBOOK_RETRY_SECONDS: '0.2',
  AUDIOBOOK_LEASE_SECONDS: '2',
  AUDIOBOOK_QUOTA_RETRY_SECONDS: '0.2',
  AUDIOBOOK_RENDER_SLOTS: '1',
  AUDIOBOOK_MASTER_RETRY_SECONDS: '0.1,0.2',
};

export function startAudiobookPlatform(env: Record<string, string> = {}): Promise<TestPlatform> {
  return startTestPlatform({ PLUGINS: AUDIOBOOK_PLUGINS, ...FAST_BOOKS, ...env });
}

export interface Segment {
  text: string;
  speaker?: string | null;
  sceneBreak?: boolean;
}

/** Calls a route and returns status and parsed JSON. */
export async function call(p: TestPlatform, key: string, method: string, path: string, json?: unknown): Promise<{ status: number; body: any }> {
  const res = await p.api(path, { method, key, json });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

export async function createBook(p: TestPlatform, key: string, input: Record<string, unknown> = {}): Promise<any> {
  const res = await call(p, key, 'POST', '/audiobooks', { title: 'Sách thử', narratorVoice: 'vi-north-female-mai', ...input });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export async function addChapter(p: TestPlatform, key: string, bookId: string, title: string, segments: Segment[], extra: Record<string, unknown> = {}): Promise<any> {
  const res = await call(p, key, 'POST', `/audiobooks/${bookId}/chapters`, { title, segments, ...extra });
  if (res.status !== 201) throw new Error(`add chapter failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export async function getBook(p: TestPlatform, key: string, bookId: string): Promise<any> {
  return (await call(p, key, 'GET', `/audiobooks/${bookId}`)).body;
}

/** Waits until the book is in one of `statuses` and no chapter is still on its way. */
export function waitForBook(p: TestPlatform, key: string, bookId: string, statuses: string[], timeoutMs = 60_000): Promise<any> {
  return waitFor(async () => {
    const book = await getBook(p, key, bookId);
    if (!book?.chapters) return null;
    const busy = book.chapters.some((c: any) => ['rendering', 'rendered', 'mastering'].includes(c.status));
    return statuses.includes(book.status) && !busy ? book : null;
  }, { timeoutMs, intervalMs: 100, what: `book ${bookId} to become ${statuses.join(' or ')}` });
}

/** A paragraph of Vietnamese narration about `n` sentences long, marked so the engine tap can tell chapters apart. */
export function prose(mark: string, sentences = 2): string {
  return Array.from({ length: sentences }, (_, i) => `${mark} câu ${i + 1} kể về một buổi chiều yên bình bên dòng sông quê.`).join(' ');
}

/** Tokens a chapter of this title and these segments costs (v4 x3, global x1.3, at least 50 characters). */
export function chapterPrice(title: string, segments: Segment[]): number {
  const characters = Math.max(50, [...title.normalize('NFC')].length + segments.reduce((n, s) => n + [...s.text.normalize('NFC')].length, 0));
  return Math.ceil(Math.round(characters * 3 * 1.3 * 1e6) / 1e6);
}

export async function grantUsed(p: TestPlatform, grantId: string): Promise<number> {
  const res = await p.admin(`/grants/${grantId}/reconcile`);
  return ((await res.json()) as { usedTokens: number }).usedTokens;
}

const ffmpegPath = (createRequire(import.meta.url)('@ffmpeg-installer/ffmpeg') as { path: string }).path;
const ffprobePath = (createRequire(import.meta.url)('@ffprobe-installer/ffprobe') as { path: string }).path;

function runTool(binary: string, args: string[], input: Buffer): Promise<{ stdout: Buffer; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile(binary, args, { encoding: 'buffer', maxBuffer: 1 << 28 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${path.basename(binary)} failed: ${stderr.toString()}`)) : resolve({ stdout, stderr: stderr.toString() }));
    // ffprobe stops reading once it has what it needs: the rest of the input is not its concern.
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(input);
  });
}

/** Integrated loudness and true peak as ffmpeg's ebur128 filter measures them. */
export async function ebur128(audio: Buffer): Promise<{ integrated: number; truePeak: number }> {
  const { stderr } = await runTool(ffmpegPath, ['-hide_banner', '-nostats', '-i', 'pipe:0', '-af', 'ebur128=peak=true', '-f', 'null', '-'], audio);
  const summary = stderr.slice(stderr.lastIndexOf('Summary:'));
  return { integrated: Number(/I:\s+(-?[\d.]+) LUFS/.exec(summary)![1]), truePeak: Number(/Peak:\s+(-?[\d.]+) dBFS/.exec(summary)![1]) };
}

/** Decoded mono 48 kHz s16le samples. */
export async function decodeSamples(audio: Buffer): Promise<Int16Array> {
  const { stdout } = await runTool(ffmpegPath, ['-v', 'error', '-i', 'pipe:0', '-f', 's16le', '-ac', '1', '-ar', '48000', 'pipe:1'], audio);
  return new Int16Array(stdout.buffer, stdout.byteOffset, stdout.length / 2);
}

/** Seconds of silence (under -50 dBFS) at the start and at the end. */
export function edgeSilences(samples: Int16Array, rate = 48000): { lead: number; tail: number } {
  const loud = (s: number) => Math.abs(s) > 32768 * 10 ** (-50 / 20);
  let first = 0;
  while (first < samples.length && !loud(samples[first]!)) first++;
  let last = samples.length - 1;
  while (last > 0 && !loud(samples[last]!)) last--;
  return { lead: first / rate, tail: (samples.length - 1 - last) / rate };
}

/** Codec, rate, channels, bit rate and tags as ffprobe reads them. */
export async function probeTags(audio: Buffer): Promise<{ codec: string; sampleRate: number; channels: number; bitRate: number; tags: Record<string, string> }> {
  const { stdout } = await runTool(ffprobePath, ['-v', 'error', '-show_entries', 'stream=codec_name,sample_rate,channels,bit_rate:format_tags', '-of', 'json', 'pipe:0'], audio);
  const json = JSON.parse(stdout.toString()) as { streams: Array<Record<string, string | number>>; format: { tags?: Record<string, string> } };
  const s = json.streams[0]!;
  return { codec: String(s.codec_name), sampleRate: Number(s.sample_rate), channels: Number(s.channels), bitRate: Number(s.bit_rate), tags: json.format.tags ?? {} };
}
