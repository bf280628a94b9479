import type { PluginContext, RouteContext } from '../../core/plugin.ts';
import { validate } from '../../core/http/validate.ts';
import { TEXT_BODY_LIMIT } from '../../core/http/synthesis-fields.ts';
import { agentSpeechBody, agentSpeechQuery, audioSpeechBody, ttsStreamBody } from './schemas.ts';
import type { Delivery, RequestScope, SpeechService } from './service.ts';

function scopeOf(ctx: RouteContext): RequestScope {
  return { auth: ctx.state.auth!, billing: ctx.state.billing, outcome: ctx.state.outcome, out: ctx.res };
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

export function registerSpeechRoutes(plugin: PluginContext, service: SpeechService): void {
  plugin.route({
    method: 'POST', path: '/audio/speech', auth: 'required', rateClass: 'speech', name: 'audio_speech', tracked: true, envelope: 'compat', jsonLimit: TEXT_BODY_LIMIT,
    handler: async (ctx) => {
      const body = validate(audioSpeechBody, ctx.request.body);
      await respond(ctx, await service.audioSpeech(body, scopeOf(ctx)));
    },
  });

  plugin.route({
    method: 'POST', path: '/tts/stream', auth: 'required', rateClass: 'speech', name: 'tts_stream', tracked: true, jsonLimit: TEXT_BODY_LIMIT,
    handler: async (ctx) => {
      const body = validate(ttsStreamBody, ctx.request.body);
      await respond(ctx, await service.ttsStream(body, scopeOf(ctx)));
    },
  });

  plugin.route({
    method: 'POST', path: '/agent/speech', auth: 'required', extraKeyHeader: 'x-agent-secret', rateClass: 'speech', name: 'vapi_speech', tracked: true, jsonLimit: TEXT_BODY_LIMIT,
    handler: async (ctx) => {
      const query = validate(agentSpeechQuery, ctx.query);
      const body = validate(agentSpeechBody, ctx.request.body);
      await respond(ctx, await service.agentSpeech(query, body, scopeOf(ctx)));
    },
  });
}
