/** Output formats of SPEC "Audio formats": content types and the rates some of them force. */

export const AUDIO_FORMATS = ['mp3', 'opus', 'wav', 'pcm', 'ulaw'] as const;
export type AudioFormat = (typeof AUDIO_FORMATS)[number];

export const ALLOWED_SAMPLE_RATES = [8000, 16000, 22050, 24000, 44100, 48000] as const;
export const DEFAULT_SAMPLE_RATE = 48000;

export const CONTENT_TYPES: Record<AudioFormat, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  wav: 'audio/wav',
  pcm: 'application/octet-stream',
  ulaw: 'audio/basic',
};

/** Formats whose rate is fixed whatever the request says. */
export const FIXED_RATES: Partial<Record<AudioFormat, number>> = { opus: 48000, ulaw: 8000 };

/** Formats that need the ffmpeg binary; the others are encoded in-process. */
export const FFMPEG_FORMATS: ReadonlySet<AudioFormat> = new Set(['mp3', 'opus']);

export function isAudioFormat(value: unknown): value is AudioFormat {
  return typeof value === 'string' && (AUDIO_FORMATS as readonly string[]).includes(value);
}

/** The rate a format is actually encoded at: the fixed one, else the request's, else 48000. */
export function outputRateFor(format: AudioFormat, requested?: number): number {
  return FIXED_RATES[format] ?? requested ?? DEFAULT_SAMPLE_RATE;
}
