import Joi from 'joi';
import { definePlugin } from '../../core/plugin.ts';
import { coreServices } from '../../core/services.ts';
import { validate } from '../../core/http/validate.ts';
import { ConfigError } from '../../config/load.ts';
import { DEFAULT_MAX_TEMPO } from '../../core/speechkit/timeline/align.ts';
import { createRecognizer, type AsrConfig } from './asr/index.ts';
import { ModelDirError } from './asr/model-dir.ts';
import { dubFields, dubForm, dubResponse, type DubFields } from './schemas.ts';
import { createDubService } from './service.ts';
import { requireUpload } from '../../core/http/uploads.ts';

interface DubConfig extends AsrConfig {
  /** longest recording dubbed in one request */
  DUB_MAX_SECONDS: number;
  /** most a segment's speech is sped up before it runs into the following pause */
  DUB_MAX_TEMPO: number;
}

const config = Joi.object<DubConfig>({
  ASR_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
  ASR_MODEL: Joi.string(),
  ASR_REMOTE_MODEL: Joi.string().default('whisper-1'),
  ASR_API_KEY: Joi.string(),
  ASR_LANGUAGE: Joi.string().default('vi'),
  ASR_TIMEOUT_SECONDS: Joi.number().min(1).max(3600).default(300),
  ASR_THREADS: Joi.number().integer().min(1).max(64).default(2),
  DUB_MAX_SECONDS: Joi.number().min(1).max(4 * 3600).default(1800),
  DUB_MAX_TEMPO: Joi.number().min(1).max(4).default(DEFAULT_MAX_TEMPO),
}).oxor('ASR_URL', 'ASR_MODEL').messages({ 'object.oxor': 'set one of ASR_URL (remote transcription) or ASR_MODEL (in-process model), not both' });

/** Recording dubbing: `POST /dub` transcribes a Vietnamese recording and re-voices it, keeping its timing. */
export default definePlugin({
  id: 'dub',
  version: '1.0.0',
  coreApi: 2,
  description: 'Dubs an uploaded Vietnamese recording with a chosen voice, keeping its timing',
  engineFeatures: ['dub'],
  deps: {
    config: coreServices.config,
    logger: coreServices.logger,
    catalog: coreServices.catalog,
    billing: coreServices.billing,
    documents: coreServices.documents,
    engine: coreServices.engine,
    blobs: coreServices.blobs,
    downloads: coreServices.downloads,
  },
  config,
  register({ deps, config: own, route }) {
    let recognizer;
    try {
      recognizer = createRecognizer(own);
    } catch (err) {
      if (err instanceof ModelDirError) throw new ConfigError(`Invalid configuration: plugin dub: ${err.message}`);
      throw err;
    }
    if (recognizer && 'loaded' in recognizer) {
      (recognizer.loaded as Promise<void>).then(
        () => deps.logger.info('speech recognition model loaded', { dir: own.ASR_MODEL }),
        (err: Error) => deps.logger.error('speech recognition model failed to load; POST /dub answers 503', { err }),
      );
    }
    const service = createDubService(deps, { recognizer, maxSeconds: own.DUB_MAX_SECONDS, maxTempo: own.DUB_MAX_TEMPO });
    route({
      method: 'POST', path: '/dub', auth: 'required', rateClass: 'media', name: 'dub', tracked: true, body: 'multipart',
      summary: 'Dub a Vietnamese recording with another voice, keeping its timing',
      description: 'The recording is transcribed and re-spoken with the chosen catalogue voice, each segment at its time. Billed by output duration (65 tokens a second, at least 150, times the engine multiplier) only on success; the upload is first checked against what the grant can pay.',
      form: dubForm,
      responses: {
        201: { description: 'The dubbed recording and its source transcript', schema: dubResponse },
        400: {
          description: '`FILE_REQUIRED` (no recording, or one sent as a text field), an unsupported (`UNSUPPORTED_AUDIO`) or over-long (`AUDIO_TOO_LONG`) recording, no speech recognised (`NO_SPEECH`), '
            + '`VOICE_NOT_FOUND` (an unknown voice), `VOICE_ENGINE_MISMATCH`, `VOICE_AMBIGUOUS`, a cloned voice, `ENGINE_RETIRED`, `UNKNOWN_ENGINE`',
        },
        403: { description: 'The grant cannot pay for a recording this long' },
        429: { description: 'A spent cap or `CONCURRENT_CONFLICT`' },
        502: { description: 'Speech recognition failed; nothing charged' },
        503: { description: 'Speech recognition or a worker is unavailable (`ASR_NOT_CONFIGURED`, `ASR_UNAVAILABLE`; nothing charged), or the audio cannot be stored (`SERVICE_UNAVAILABLE`, Retry-After; refunded)' },
      },
      // Core deletes the upload once the handler is done (core/http/uploads.ts).
      handler: async (ctx) => {
        const upload = requireUpload(ctx, 'audio', 'recording');
        const fields = validate<DubFields>(dubFields, ctx.request.body);
        const { auth, billing, outcome, stopping } = ctx.state;
        ctx.status = 201;
        ctx.body = await service.dub(upload.path, fields, { auth: auth!, billing, outcome, signal: stopping });
      },
    });
  },
});
