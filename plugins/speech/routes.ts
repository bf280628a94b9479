import type { RouteContext, RouteRegistrar } from '../../core/plugin.ts';
import { TEXT_BODY_LIMIT } from '../../core/http/synthesis-fields.ts';
import { agentSpeechBody, agentSpeechQuery, audioSpeechBody, ttsStreamBody, type AgentSpeechBody, type AgentSpeechQuery, type AudioSpeechBody, type TtsStreamBody } from './schemas.ts';
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
    request: { body: audioSpeechBody },
    handler: async (ctx, { body }) => {
      await respond(ctx, await service.audioSpeech(body, scopeOf(ctx)));
    },
  });

  route<TtsStreamBody, unknown>({
    method: 'POST', path: '/tts/stream', auth: 'required', rateClass: 'speech', name: 'tts_stream', tracked: true, jsonLimit: TEXT_BODY_LIMIT,
    summary: 'Low-latency framed audio stream',
    request: { body: ttsStreamBody },
    handler: async (ctx, { body }) => {
      await respond(ctx, await service.ttsStream(body, scopeOf(ctx)));
    },
  });

  route<AgentSpeechBody, AgentSpeechQuery>({
    method: 'POST', path: '/agent/speech', auth: 'required', extraKeyHeader: 'x-agent-secret', rateClass: 'speech', name: 'vapi_speech', tracked: true, jsonLimit: TEXT_BODY_LIMIT,
    summary: 'Custom-voice webhook for voice-agent platforms: raw PCM',
    request: { body: agentSpeechBody, query: agentSpeechQuery },
    handler: async (ctx, { body, query }) => {
      await respond(ctx, await service.agentSpeech(query, body, scopeOf(ctx)));
    },
  });
}
