/**
 * What an uploaded recording really is, read from its content with ffprobe
 * (never from its name or declared type): container, audio codec and
 * duration. Only the audio containers the API accepts pass.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import { measureSeconds, UndecodableAudioError } from './decode.ts';

/** Accepted upload types, by what ffprobe calls their container. */
const ACCEPTED: Array<{ type: UploadAudioType; formats: string[] }> = [
  { type: 'wav', formats: ['wav'] },
  { type: 'mp3', formats: ['mp3'] },
  { type: 'm4a', formats: ['mov', 'mp4', 'm4a'] },
  { type: 'aac', formats: ['aac'] },
  { type: 'ogg', formats: ['ogg'] },
  { type: 'flac', formats: ['flac'] },
  { type: 'webm', formats: ['webm', 'matroska'] },
];

export type UploadAudioType = 'wav' | 'mp3' | 'm4a' | 'aac' | 'ogg' | 'flac' | 'webm';
export const UPLOAD_AUDIO_TYPES: readonly UploadAudioType[] = ACCEPTED.map((a) => a.type);

export interface ProbedUpload {
  type: UploadAudioType;
  /** ffprobe's container name(s), e.g. `mov,mp4,m4a,3gp,3g2,mj2` */
  container: string;
  codec: string;
  sampleRate: number;
  channels: number;
  seconds: number;
}

export class UnsupportedAudioError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsupportedAudioError';
  }
}

export class ProbeUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProbeUnavailableError';
  }
}

let ffprobePath: string | null | undefined;

/** The ffprobe that @ffprobe-installer ships for this platform; null when there is none. */
export function locateFfprobe(): string | null {
  if (ffprobePath !== undefined) return ffprobePath;
  try {
    const path = (createRequire(import.meta.url)('@ffprobe-installer/ffprobe') as { path: string }).path;
    accessSync(path, constants.X_OK);
    ffprobePath = path;
  } catch {
    ffprobePath = null;
  }
  return ffprobePath;
}

interface ProbeJson {
  format?: { format_name?: string; duration?: string };
  streams?: Array<{ codec_type?: string; codec_name?: string; sample_rate?: string; channels?: number; duration?: string }>;
}

function runProbe(binary: string, file: string): Promise<ProbeJson | null> {
  const args = ['-v', 'error', '-show_entries', 'format=format_name,duration:stream=codec_type,codec_name,sample_rate,channels,duration', '-of', 'json', file];
  return new Promise((resolve) => {
    execFile(binary, args, { timeout: 20_000, maxBuffer: 1 << 20 }, (err, stdout) => {
      if (err) return resolve(null);
      try {
        resolve(JSON.parse(stdout) as ProbeJson);
      } catch {
        resolve(null);
      }
    });
  });
}

const acceptedList = () => 'wav, mp3, m4a/aac, ogg/opus, flac, webm';

/** Probes `file`; throws UnsupportedAudioError for anything that is not an accepted audio upload. */
export async function probeUpload(file: string): Promise<ProbedUpload> {
  const binary = locateFfprobe();
  if (!binary) throw new ProbeUnavailableError('ffprobe is not available on this server');
  const json = await runProbe(binary, file);
  const container = json?.format?.format_name ?? '';
  const audio = json?.streams?.find((s) => s.codec_type === 'audio');
  if (!json || !audio) throw new UnsupportedAudioError(`The upload is not a recording this route accepts (${acceptedList()}).`);
  const names = container.split(',');
  const accepted = ACCEPTED.find((a) => a.formats.some((f) => names.includes(f)));
  if (!accepted) throw new UnsupportedAudioError(`Audio in a "${container}" container is not accepted; send ${acceptedList()}.`);
  let seconds = Number(audio.duration ?? json.format?.duration);
  // Recordings made by browsers (webm) often state no duration: count it by decoding.
  if (!Number.isFinite(seconds) || seconds <= 0) {
    seconds = await measureSeconds(file).catch((err: unknown) => {
      // A stream ffprobe names but ffmpeg cannot read (a WAV declaring 0 bits per sample) is a bad upload.
      if (err instanceof UndecodableAudioError) throw new UnsupportedAudioError(`The upload's audio cannot be decoded; send ${acceptedList()}.`);
      throw err;
    });
  }
  if (!(seconds > 0)) throw new UnsupportedAudioError('The upload contains no audio samples.');
  return {
    type: accepted.type, container, codec: audio.codec_name ?? 'unknown', sampleRate: Number(audio.sample_rate ?? 0),
    channels: audio.channels ?? 0, seconds,
  };
}
