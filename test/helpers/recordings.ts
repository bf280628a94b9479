/**
 * Makes source recordings for dubbing tests: real speech from the platform's
 * engine placed at chosen times in silence, encoded to an upload format by
 * the bundled ffmpeg.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestPlatform } from './platform.ts';
import { coreServices } from '../../core/services.ts';
import { speakClip } from '../../core/speechkit/timeline/clip.ts';
import { wavFile } from '../../core/speechkit/audio/wav.ts';
import { requireFfmpeg } from '../../core/speechkit/audio/ffmpeg.ts';

export type RecordingFormat = 'wav' | 'mp3' | 'ogg' | 'm4a' | 'aac' | 'flac' | 'webm';

const ENCODE: Record<RecordingFormat, string[]> = {
  wav: ['-c:a', 'pcm_s16le', '-f', 'wav'],
  mp3: ['-c:a', 'libmp3lame', '-b:a', '96k', '-f', 'mp3'],
  ogg: ['-c:a', 'libopus', '-b:a', '48k', '-f', 'ogg'],
  m4a: ['-c:a', 'aac', '-b:a', '96k', '-f', 'ipod'],
  aac: ['-c:a', 'aac', '-b:a', '96k', '-f', 'adts'],
  flac: ['-c:a', 'flac', '-f', 'flac'],
  webm: ['-c:a', 'libopus', '-b:a', '48k', '-f', 'webm'],
};

export async function encodeWav(wav: Buffer, format: RecordingFormat): Promise<Buffer> {
  if (format === 'wav') return wav;
  const dir = mkdtempSync(path.join(tmpdir(), 'recording-'));
  try {
    writeFileSync(path.join(dir, 'in.wav'), wav);
    const out = path.join(dir, `out.${format}`);
    await new Promise<void>((resolve, reject) => {
      execFile(requireFfmpeg('wav'), ['-hide_banner', '-loglevel', 'error', '-y', '-i', path.join(dir, 'in.wav'), ...ENCODE[format], out], (err, _o, stderr) =>
        err ? reject(new Error(`ffmpeg: ${stderr}`)) : resolve());
    });
    return readFileSync(out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface Utterance {
  at: number;
  text: string;
  voice?: string;
}

/** A mono 48 kHz recording of `seconds` with each utterance's speech starting at its `at`. */
export async function makeRecording(p: TestPlatform, utterances: Utterance[], seconds: number, format: RecordingFormat = 'wav'): Promise<Buffer> {
  const engine = await p.platform.service(coreServices.engine);
  const catalog = await p.platform.service(coreServices.catalog);
  const rate = 48000;
  const pcm = Buffer.alloc(Math.round(seconds * rate) * 2);
  for (const u of utterances) {
    const voice = await catalog.resolve({ voice: u.voice ?? 'vi-north-male-minh', engine: 'v4', accountId: null, allowClones: false, param: 'voice' });
    const clip = await speakClip(engine, { text: u.text, voice, sampleRate: rate });
    clip.pcm.copy(pcm, Math.round(u.at * rate) * 2, 0, Math.min(clip.pcm.length, pcm.length - Math.round(u.at * rate) * 2));
  }
  return encodeWav(wavFile(pcm, rate), format);
}
