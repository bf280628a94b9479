/**
 * Server-sent events of `POST /audio/speech` with `stream_format: "sse"`,
 * in the shape the compatible API uses: one `data:` line of JSON per event
 * whose `type` names it. `speech.audio.done` comes exactly once, last, and
 * only when the audio is complete; an incomplete stream ends with
 * `speech.audio.error` instead.
 */

/** Bytes of audio per delta: even (whole 16-bit samples) and a multiple of 3 (no base64 padding mid-stream). */
export const DELTA_BYTES = 24_000;

export type SpeechEvent =
  | { type: 'speech.audio.delta'; audio: string }
  | { type: 'speech.audio.done'; audio_seconds: number }
  | { type: 'speech.audio.error'; error: { message: string; type: string } };

export function sseEvent(event: SpeechEvent): Buffer {
  return Buffer.from(`data: ${JSON.stringify(event)}\n\n`);
}

/** One encoded piece of audio as delta events of at most DELTA_BYTES each. */
export function deltaEvents(audio: Buffer): Buffer[] {
  const events: Buffer[] = [];
  for (let offset = 0; offset < audio.length; offset += DELTA_BYTES) {
    const piece = audio.subarray(offset, offset + DELTA_BYTES);
    events.push(sseEvent({ type: 'speech.audio.delta', audio: piece.toString('base64') }));
  }
  return events;
}

export function doneEvent(audioSeconds: number): Buffer {
  return sseEvent({ type: 'speech.audio.done', audio_seconds: Math.round(audioSeconds * 1000) / 1000 });
}

export function errorEvent(message: string): Buffer {
  return sseEvent({ type: 'speech.audio.error', error: { message, type: 'api_error' } });
}
