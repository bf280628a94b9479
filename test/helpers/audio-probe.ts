/**
 * Decodes audio the way a client would: ffprobe from @ffprobe-installer
 * reads the bytes from a file and reports codec, rate, channels and
 * duration. Headerless PCM and mu-law need their rate from X-Sample-Rate.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';

const ffprobePath = (createRequire(import.meta.url)('@ffprobe-installer/ffprobe') as { path: string }).path;

export interface ProbedAudio {
  codec: string;
  sampleRate: number;
  channels: number;
  duration: number;
}

export type RawAudio = { format: 's16le' | 'mulaw'; sampleRate: number };

export async function probeAudio(bytes: Buffer, raw?: RawAudio): Promise<ProbedAudio> {
  const dir = mkdtempSync(path.join(tmpdir(), 'probe-'));
  const file = path.join(dir, 'audio');
  writeFileSync(file, bytes);
  const input = raw ? ['-f', raw.format, '-ar', String(raw.sampleRate), '-ch_layout', 'mono'] : [];
  try {
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(ffprobePath, ['-v', 'error', ...input, '-show_entries', 'stream=codec_name,sample_rate,channels:format=duration', '-of', 'json', file], (err, out, stderr) =>
        err ? reject(new Error(`ffprobe failed: ${stderr || err.message}`)) : resolve(out));
    });
    const parsed = JSON.parse(stdout) as { streams: Array<{ codec_name: string; sample_rate: string; channels: number }>; format: { duration: string } };
    const stream = parsed.streams[0];
    if (!stream) throw new Error('ffprobe found no audio stream');
    return { codec: stream.codec_name, sampleRate: Number(stream.sample_rate), channels: stream.channels, duration: Number(parsed.format.duration) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Seconds of speech a text plausibly takes at speed 1: Vietnamese is read
 * at roughly two to four syllables (words) per second; the bounds are wide
 * enough for any voice, narrow enough to catch silence or a truncated file.
 */
export function speechSecondsRange(text: string, speed = 1): { min: number; max: number } {
  const words = text.trim().split(/\s+/u).length;
  return { min: (words * 0.2) / speed, max: (words * 0.8) / speed + 0.5 };
}
