import Joi from 'joi';
import { readFile } from 'node:fs/promises';
import { definePlugin } from '../../core/plugin.ts';
import { coreServices } from '../../core/services.ts';
import { DomainError } from '../../core/errors.ts';
import { validate } from '../../core/http/validate.ts';
import { DEFAULT_MAX_TEMPO } from '../../core/speechkit/timeline/align.ts';
import { decodeSrt, parseSrt, SrtError } from './parse.ts';
import { srtFields, srtForm, srtRefusalFields, srtResponse, type SrtFields } from './schemas.ts';
import { createSrtService } from './service.ts';
import { requireUpload } from '../../core/http/uploads.ts';

interface SrtConfig {
  /** most a cue's speech is sped up before it runs into the gap after the cue */
  SRT_MAX_TEMPO: number;
  /** longest file a subtitle track may ask for: the WAV is written up to its last cue's end, whatever the text */
  SRT_MAX_SECONDS: number;
}

const SUBTITLE = 'subtitle file (.srt)';

/** Subtitle dubbing: `POST /srt` turns an .srt file into one timecode-aligned WAV. */
export default definePlugin({
  id: 'srt',
  version: '1.0.0',
  coreApi: 2,
  description: 'Dubs a subtitle (.srt) file into a timecode-aligned WAV',
  engineFeatures: ['srt'],
  deps: {
    config: coreServices.config,
    logger: coreServices.logger,
    catalog: coreServices.catalog,
    billing: coreServices.billing,
    engine: coreServices.engine,
    blobs: coreServices.blobs,
    downloads: coreServices.downloads,
  },
  config: Joi.object<SrtConfig>({
    SRT_MAX_TEMPO: Joi.number().min(1).max(4).default(DEFAULT_MAX_TEMPO),
    // 3 hours is a feature film (about 1 GB of WAV); a 48 kHz mono WAV cannot pass 12 hours (4 GiB).
    SRT_MAX_SECONDS: Joi.number().integer().min(60).max(12 * 3600).default(3 * 3600),
  }),
  register({ deps, config, route }) {
    const service = createSrtService(deps, { maxTempo: config.SRT_MAX_TEMPO, maxSeconds: config.SRT_MAX_SECONDS });
    // The form fields are validated in the handler, inside the try whose finally deletes the upload.
    route({
      method: 'POST', path: '/srt', auth: 'required', rateClass: 'media', name: 'srt', tracked: true, body: 'multipart',
      summary: 'Dub a subtitle file into a timecode-aligned WAV',
      description: 'Each cue is spoken at its time; speech that runs long is sped up (pitch kept) and may run into the gap after its cue. Billed for the submitted text up front, refunded on failure; the text validations apply.',
      form: srtForm,
      responses: {
        201: { description: 'The dubbed subtitles', schema: srtResponse },
        400: {
          description: '`FILE_REQUIRED` (no file, or the file sent as a text field), a file that is not valid SRT (`SRT_INVALID` with `cue` and `line`, `SRT_EMPTY`), a track that ends past `SRT_MAX_SECONDS` (`SRT_TOO_LONG` with `cue`), '
            + '`VOICE_NOT_FOUND`, `VOICE_ENGINE_MISMATCH`, `VOICE_AMBIGUOUS`, `CLONE_UNAVAILABLE`, `CLONE_ENGINE_RETIRED` (with `engine`), `ENGINE_RETIRED`, `UNKNOWN_ENGINE`, unreadable text, `NOTHING_TO_SPEAK`',
          schema: srtRefusalFields,
        },
        403: { description: 'The grant cannot pay' },
        422: { description: '`CONTENT_REJECTED` (only with aiRefine)' },
        429: { description: 'A spent cap or `CONCURRENT_CONFLICT`' },
        503: { description: 'No worker for the voice right now, the server is stopping, or the audio cannot be stored (`SERVICE_UNAVAILABLE`, Retry-After); refunded' },
      },
      // Core deletes the upload once the handler is done (core/http/uploads.ts).
      handler: async (ctx) => {
        const upload = requireUpload(ctx, 'file', SUBTITLE);
        const body = validate<SrtFields>(srtFields, ctx.request.body);
        let cues;
        try {
          cues = parseSrt(decodeSrt(await readFile(upload.path)));
        } catch (err) {
          if (!(err instanceof SrtError)) throw err;
          throw new DomainError('invalid', err.message, {
            param: 'file', code: err.cue === null && /no cues/.test(err.message) ? 'SRT_EMPTY' : 'SRT_INVALID',
            extra: err.cue === null ? undefined : { cue: err.cue, line: err.line },
          });
        }
        const { auth, billing, outcome, stopping } = ctx.state;
        ctx.status = 201;
        ctx.body = await service.dub(cues, body, { auth: auth!, billing, outcome, signal: stopping });
      },
    });
  },
});
