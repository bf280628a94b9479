import type { RouteContext, RouteRegistrar } from '../../core/plugin.ts';
import { TEXT_BODY_LIMIT } from '../../core/http/synthesis-fields.ts';
import Joi from 'joi';
import {
  agentSpeechBody, agentSpeechQuery, audioSpeechBody, sampleRateHeader, SPEECH_CONTENT_TYPES, streamBusyFields, ttsStreamBody,
  type AgentSpeechBody, type AgentSpeechQuery, type AudioSpeechBody, type TtsStreamBody,
} from './schemas.ts';
import { AUDIO_FORMATS } from '../../core/speechkit/audio/index.ts';
import type { Delivery, RequestScope, SpeechService } from './service.ts';

function scopeOf(ctx: RouteContext): RequestScope {
  return { auth: ctx.state.auth!, billing: ctx.state.billing, outcome: ctx.state.outcome, out: ctx.res, stopping: ctx.state.stopping };
}

/**
 * Sends the status and headers, then lets the service write the body
 * straight to the response: it must settle billing before the body ends and
 * be able to cut the connection when audio stops short, neither of which a
 * Koa stream body allows. The outcome event waits for that settlement.
 */
async function respond(ctx: RouteContext, delivery: Delivery): Promise<void> {
  ctx.status = 200;
  for (const [name, value] of Object.entries(delivery.headers)) ctx.set(name, value);
  ctx.respond = false;
  const sent = delivery.send();
  ctx.state.outcome.pending.push(sent);
  await sent;
}

export function registerSpeechRoutes(route: RouteRegistrar, service: SpeechService): void {
  route<AudioSpeechBody, unknown>({
    method: 'POST', path: '/audio/speech', auth: 'required', rateClass: 'speech', name: 'audio_speech', tracked: true, envelope: 'compat', jsonLimit: TEXT_BODY_LIMIT,
    summary: 'Speech in the response (compatible with the widely used speech endpoint)',
    description: 'A drop-in for clients of the widely used speech endpoint: change the base address and the key. Errors use that endpoint\'s envelope (`CompatError`).',
    request: { body: audioSpeechBody },
    responses: {
      200: {
        description: 'The audio: `audio/mpeg` (mp3, the default), `audio/wav`, `audio/ogg` (opus), `audio/basic` (ulaw), `application/octet-stream` (pcm), or `text/event-stream` with `stream_format` sse (`speech.audio.delta` events, then exactly one `speech.audio.done`; without it the audio is incomplete and refunded).',
        contentType: SPEECH_CONTENT_TYPES,
        headers: {
          'X-Sample-Rate': sampleRateHeader,
          'X-Service-Job-Id': 'id under which a copy is saved (not streamed requests): shortly after, GET /tts/{jobId} answers `completed` with a link to the same audio',
        },
      },
      400: { description: 'Missing input, unknown voice, unsupported format, stream_format with a format that cannot stream, conflicting sample_rate, retired model' },
      403: { description: '`insufficient_quota` (the grant cannot pay: too few tokens left, used up, expired or replaced, and no other active grant covers the engine), or `authentication_error` for a plan that lacks the engine' },
      422: { description: '`content_policy_violation` (only with aiRefine)' },
      429: { description: '`rate_limit_exceeded`: the rate limit or a spent daily or weekly cap (the two cannot be told apart here)' },
      500: { description: 'Synthesis failed; refunded' },
      503: { description: 'No worker or encoder for the voice or format right now, or a whole WAV could not be stored (a full disk, its store out of reach; Retry-After); refunded' },
    },
    handler: async (ctx, { body }) => {
      await respond(ctx, await service.audioSpeech(body, scopeOf(ctx)));
    },
  });

  route<TtsStreamBody, unknown>({
    method: 'POST', path: '/tts/stream', auth: 'required', rateClass: 'speech', name: 'tts_stream', tracked: true, jsonLimit: TEXT_BODY_LIMIT,
    summary: 'Low-latency framed audio stream',
    description: 'Frames: a 4-byte big-endian length N, then N bytes of audio, repeated; a complete stream ends with a frame of length 0. Each frame decodes on its own (WAV frames are whole files; only pcm and ulaw frames can simply be joined). A 44-byte WAV with no samples is a heartbeat. Billed when the zero-length frame arrives after audio; refunded when the stream is cut short or carried only heartbeats; a client that disconnects is charged.',
    request: { body: ttsStreamBody },
    stream: true,
    responses: {
      200: {
        description: 'The framed stream',
        contentType: 'application/octet-stream',
        headers: {
          'X-Sample-Rate': { ...sampleRateHeader, description: 'the actual rate', required: true },
          'X-Output-Format': { description: 'the format of the frames', schema: Joi.string().valid(...AUDIO_FORMATS), required: true },
          'X-Stream-Format': { description: '`len32-wav-chunks` for WAV frames, `len32-frames` for raw codec bytes', schema: Joi.string().valid('len32-wav-chunks', 'len32-frames'), required: true },
          'X-Stream-Heartbeat': { description: 'WAV streams only: most seconds between heartbeats', schema: Joi.number() },
        },
      },
      400: {
        description: '`VOICE_NOT_FOUND` (an unknown voice, or a clone that is not yours), `VOICE_ENGINE_MISMATCH`, `VOICE_AMBIGUOUS`, `CLONE_UNAVAILABLE` (the clone\'s reference recording was removed), '
          + '`CLONE_ENGINE_RETIRED` (with `engine`), `SAMPLE_RATE_CONFLICT` (a sampleRate opus or ulaw cannot take), `STREAM_UNSUPPORTED` (an engine that does not stream), `ENGINE_RETIRED`, `UNKNOWN_ENGINE`; an unknown format',
        schema: Joi.object({ engine: Joi.string() }),
      },
      403: { description: 'The grant cannot pay' },
      422: { description: '`CONTENT_REJECTED` (moderation, only with aiRefine)' },
      429: { description: '`STREAM_CONCURRENCY` (4 open streams per grant; 2 per signed-in person), a spent cap, `CONCURRENT_CONFLICT`; nothing charged' },
      502: { description: 'Every worker failed before producing audio; refunded' },
      503: { description: '`STREAM_BUSY` (with `fallback`: `generate`, use POST /tts); no worker or encoder right now; nothing charged', schema: streamBusyFields },
    },
    handler: async (ctx, { body }) => {
      await respond(ctx, await service.ttsStream(body, scopeOf(ctx)));
    },
  });

  route<AgentSpeechBody, AgentSpeechQuery>({
    method: 'POST', path: '/agent/speech', auth: 'required', extraKeyHeader: 'x-agent-secret', rateClass: 'speech', name: 'vapi_speech', tracked: true, jsonLimit: TEXT_BODY_LIMIT,
    summary: 'Custom-voice webhook for voice-agent platforms: raw PCM',
    description: 'Raw mono signed 16-bit little-endian PCM at exactly the requested rate, streamed as it is made, no header. The key may come in X-AGENT-SECRET (the server secret the platform forwards). aiRefine is never applied; refunded if the audio is cut short.',
    request: { body: agentSpeechBody, query: agentSpeechQuery },
    responses: {
      200: { description: 'Raw PCM', contentType: 'application/octet-stream', headers: { 'X-Sample-Rate': { ...sampleRateHeader, required: true } } },
      400: { description: 'Not a voice-request, empty text, unsupported rate; `VOICE_NOT_FOUND` (an unknown voice), `VOICE_ENGINE_MISMATCH`, `VOICE_AMBIGUOUS`, a cloned voice, `ENGINE_RETIRED`, `UNKNOWN_ENGINE`' },
      403: { description: 'The grant cannot pay' },
      429: { description: 'A spent cap or `CONCURRENT_CONFLICT`' },
      502: { description: 'The worker produced no audio; refunded. The body has only `statusCode` and `message`' },
      503: { description: 'No worker answered within the deadline; refunded' },
    },
    handler: async (ctx, { body, query }) => {
      await respond(ctx, await service.agentSpeech(query, body, scopeOf(ctx)));
    },
  });
}
