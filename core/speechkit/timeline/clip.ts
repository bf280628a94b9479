/**
 * One piece of text spoken as a clip: prepared (numbers, dates, cue tags),
 * synthesised through the engine port, collected, and trimmed of the
 * silence the engine leaves around it so the clip starts and ends on speech.
 */
import type { SpeechEngine, VoiceProfile } from '../../ports/engine.ts';
import { prepareText } from '../text/prepare.ts';
import { cueOfChunk } from '../text/cues.ts';
import { trimSilence } from './activity.ts';

export interface SpokenClip {
  /** s16le mono at the requested rate, trimmed; empty only when the text holds no words (nothing, or cue tags alone) */
  pcm: Buffer;
  seconds: number;
  /** engine time */
  genMs: number;
}

export interface ClipRequest {
  /** the text as the request gave it (refined already when aiRefine asked for it) */
  text: string;
  voice: VoiceProfile;
  speed?: number;
  sampleRate: number;
  signal?: AbortSignal;
}

export async function speakClip(engine: SpeechEngine, request: ClipRequest): Promise<SpokenClip> {
  const started = performance.now();
  const prepared = prepareText(request.text);
  if (prepared.chunks.length === 0) return { pcm: Buffer.alloc(0), seconds: 0, genMs: 0 };
  const parts: Buffer[] = [];
  for await (const chunk of engine.synthesize({
    text: prepared.text, voice: request.voice, speed: request.speed ?? 1, sampleRate: request.sampleRate, signal: request.signal,
  })) {
    parts.push(chunk.pcm);
  }
  const pcm = trimSilence(Buffer.concat(parts), request.sampleRate);
  // Words that came back as no sound (or only silence) are a failed render, refunded, never a paid gap in the
  // file. Cue tags alone are pauses: their clip is rightly empty once trimmed.
  if (pcm.length === 0 && prepared.chunks.some((chunk) => cueOfChunk(chunk) === null)) throw new Error(`the engine produced no audio for ${JSON.stringify(prepared.text.slice(0, 40))}`);
  return { pcm, seconds: pcm.length / 2 / request.sampleRate, genMs: Math.round(performance.now() - started) };
}
