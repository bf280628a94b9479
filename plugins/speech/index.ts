import { definePlugin } from '../../core/plugin.ts';
import { registerSpeechRoutes } from './routes.ts';
import { createSpeechService } from './service.ts';

/**
 * Synchronous and streaming speech: `POST /audio/speech` (the compatible
 * route), `POST /tts/stream` (length-prefixed frames) and `POST /agent/speech`
 * (the voice-agent webhook, raw PCM).
 */
export default definePlugin({
  name: 'speech',
  version: '1.0.0',
  description: 'Synchronous, framed-stream and voice-agent speech routes',
  setup(plugin) {
    registerSpeechRoutes(plugin, createSpeechService(plugin));
  },
});
