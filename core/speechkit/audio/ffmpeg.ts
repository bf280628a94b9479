/**
 * Locates the encoders — Debian's `lame` for MP3 when installed, and the
 * ffmpeg binary shipped by @ffmpeg-installer for Opus, mastering and MP3
 * without lame — and says which formats can be encoded, so the API can
 * answer 503 naming the format (or fall back to WAV) instead of failing
 * mid-stream.
 */
import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import { execFile } from 'node:child_process';
import { AUDIO_FORMATS, FFMPEG_FORMATS, type AudioFormat } from './formats.ts';
import { findExecutable } from './binaries.ts';

export interface EncoderAvailability {
  /** path of an executable ffmpeg, or null */
  ffmpeg: string | null;
  /** path of Debian's lame (MP3), or null */
  lame: string | null;
  formats: Record<AudioFormat, boolean>;
  /** why ffmpeg is unusable, when it is */
  reason: string | null;
}

export class EncoderUnavailableError extends Error {
  readonly format: AudioFormat;

  constructor(format: AudioFormat, reason: string) {
    super(`No encoder available for ${format}: ${reason}`);
    this.name = 'EncoderUnavailableError';
    this.format = format;
  }
}

let cached: EncoderAvailability | null = null;

function locateFfmpeg(): { path: string | null; reason: string | null } {
  let path: string;
  try {
    // The installer package throws on platforms it has no binary for.
    path = (createRequire(import.meta.url)('@ffmpeg-installer/ffmpeg') as { path: string }).path;
  } catch (err) {
    return { path: null, reason: `@ffmpeg-installer/ffmpeg unavailable: ${(err as Error).message}` };
  }
  try {
    accessSync(path, constants.X_OK);
    return { path, reason: null };
  } catch {
    return { path: null, reason: `ffmpeg at ${path} is missing or not executable` };
  }
}

/** Cheap, cached check: is the binary present and executable. */
export function encoderAvailability(): EncoderAvailability {
  if (cached) return cached;
  const { path, reason } = locateFfmpeg();
  const lame = findExecutable('lame');
  const formats = Object.fromEntries(
    AUDIO_FORMATS.map((f) => [f, !FFMPEG_FORMATS.has(f) || path !== null || (f === 'mp3' && lame !== null)]),
  ) as Record<AudioFormat, boolean>;
  cached = { ffmpeg: path, lame, formats, reason };
  return cached;
}

export function canEncode(format: AudioFormat): boolean {
  return encoderAvailability().formats[format];
}

/** Path of the ffmpeg binary; throws EncoderUnavailableError naming the format otherwise. */
export function requireFfmpeg(format: AudioFormat): string {
  const { ffmpeg, reason } = encoderAvailability();
  if (!ffmpeg) throw new EncoderUnavailableError(format, reason ?? 'ffmpeg not found');
  return ffmpeg;
}

/**
 * Deeper start-up check: runs the binary and confirms it has the MP3 and
 * Opus encoders. Resolves with the formats that are really usable.
 */
export async function probeEncoders(): Promise<Record<AudioFormat, boolean>> {
  const base = encoderAvailability();
  if (!base.ffmpeg) return base.formats;
  const listing = await new Promise<string>((resolve) => {
    execFile(base.ffmpeg!, ['-hide_banner', '-encoders'], { timeout: 10_000 }, (err, stdout) => resolve(err ? '' : stdout));
  });
  return { ...base.formats, mp3: base.lame !== null || /\blibmp3lame\b/.test(listing), opus: /\blibopus\b/.test(listing) };
}
