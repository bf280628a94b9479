/**
 * The internal wire format between API workers and the inference service:
 * POST JSON {text, voice, speed, sampleRate} → 200 chunked raw s16le with
 * `X-Sample-Rate`. A stream that ends without its final chunk is a failure.
 */
import type { VoiceProfile } from '../../core/ports/engine.ts';

export const SYNTHESIZE_PATH = '/internal/synthesize';
export const HEALTH_PATH = '/internal/health';
export const SAMPLE_RATE_HEADER = 'x-sample-rate';

export interface WireRequest {
  text: string;
  voice: VoiceProfile;
  speed: number;
  sampleRate: number;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function validVoice(v: unknown): v is VoiceProfile {
  if (!isRecord(v) || typeof v.id !== 'string' || !isRecord(v.render)) return false;
  const r = v.render;
  if (r.backend === 'espeak') return typeof r.espeakVoice === 'string' && r.espeakVoice.length > 0;
  if (r.backend === 'onnx') return typeof r.modelDir === 'string' && r.modelDir.length > 0;
  return false;
}

/** Returns the request, or a message naming the first bad field. */
export function parseWireRequest(body: unknown): WireRequest | string {
  if (!isRecord(body)) return 'body must be a JSON object';
  if (typeof body.text !== 'string' || body.text.trim() === '') return 'text must be a non-empty string';
  if (!validVoice(body.voice)) return 'voice must be a voice profile with espeak or onnx render parameters';
  if (typeof body.speed !== 'number' || !(body.speed >= 0.5 && body.speed <= 2)) return 'speed must be a number from 0.5 to 2.0';
  if (!Number.isInteger(body.sampleRate) || (body.sampleRate as number) < 4000 || (body.sampleRate as number) > 192000) {
    return 'sampleRate must be an integer rate in Hz';
  }
  return { text: body.text, voice: body.voice, speed: body.speed, sampleRate: body.sampleRate as number };
}
