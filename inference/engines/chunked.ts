/**
 * The synthesis loop both local engines share: split prepared text into
 * chunks, render text chunks with lookahead, turn cue tags into pauses,
 * resample to the requested rate and yield PCM as each chunk is ready.
 */
import type { PcmChunk, SynthesisRequest } from '../../core/ports/engine.ts';
import { cueOfChunk, type CueTag } from '../../core/speechkit/text/cues.ts';
import { splitChunks } from '../../core/speechkit/text/split.ts';
import { silence } from '../../core/speechkit/audio/pcm.ts';
import { Resampler } from '../../core/speechkit/audio/resample.ts';
import { throwIfAborted } from '../../core/speechkit/abort.ts';
import { renderAhead } from './lookahead.ts';
import type { RenderedPcm } from './espeak-process.ts';

/** Pause lengths standing in for the cues until a voice can laugh or sigh. */
export const DEFAULT_CUE_PAUSE_MS: Record<CueTag, number> = { 'cười': 500, 'thở dài': 600, 'hắng giọng': 400 };

export interface ChunkLoopOptions {
  /** renders running ahead of the chunk being consumed */
  lookahead: number;
  /** rate of the silence generated for cues; the text renderer's native rate */
  cueRate: number;
  cuePauseMs: Record<CueTag, number>;
  maxChunkChars?: number;
}

export const MIN_SPEED = 0.5;
export const MAX_SPEED = 2.0;

export function validateRequest(request: SynthesisRequest): void {
  if (!(request.speed >= MIN_SPEED && request.speed <= MAX_SPEED)) {
    throw new RangeError(`speed must be between ${MIN_SPEED} and ${MAX_SPEED}, got ${request.speed}`);
  }
  if (!Number.isInteger(request.sampleRate) || request.sampleRate < 4000 || request.sampleRate > 192000) {
    throw new RangeError(`unsupported sample rate ${request.sampleRate}`);
  }
}

export async function* synthesizeChunks(
  request: SynthesisRequest,
  renderText: (text: string, signal: AbortSignal) => Promise<RenderedPcm>,
  options: ChunkLoopOptions,
): AsyncGenerator<PcmChunk> {
  validateRequest(request);
  throwIfAborted(request.signal);
  const chunks = splitChunks(request.text, { maxChars: options.maxChunkChars ?? 250 });
  const render = async (chunk: string, signal: AbortSignal): Promise<RenderedPcm> => {
    const cue = cueOfChunk(chunk);
    if (cue) return { pcm: silence(options.cuePauseMs[cue], options.cueRate), sampleRate: options.cueRate };
    return renderText(chunk, signal);
  };
  // One resampler per source rate keeps the filter continuous across chunk seams.
  const resamplers = new Map<number, Resampler>();
  let index = 0;
  try {
    for await (const rendered of renderAhead(chunks, render, { depth: options.lookahead, signal: request.signal })) {
      throwIfAborted(request.signal);
      let resampler = resamplers.get(rendered.sampleRate);
      if (!resampler) {
        resampler = new Resampler(rendered.sampleRate, request.sampleRate);
        resamplers.set(rendered.sampleRate, resampler);
      }
      let pcm = resampler.push(rendered.pcm);
      // The filter's tail rides with the last chunk: still one chunk per sentence.
      if (++index === chunks.length) pcm = Buffer.concat([pcm, ...[...resamplers.values()].map((r) => r.flush())]);
      if (pcm.length > 0) yield { pcm, sampleRate: request.sampleRate };
    }
  } finally {
    for (const r of resamplers.values()) r.close();
  }
}
