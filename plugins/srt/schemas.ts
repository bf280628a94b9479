import Joi from 'joi';

/** The form fields of `POST /srt` besides the file (multipart text fields). */
export interface SrtFields {
  voiceId?: string | null;
  engine?: string | null;
  aiRefine: boolean;
}

export const srtFields = Joi.object<SrtFields>({
  voiceId: Joi.string().trim().max(200).allow(null, ''),
  engine: Joi.string().trim().max(40).allow(null, ''),
  aiRefine: Joi.boolean().default(false),
}).default({});

/** The whole form, for the API reference (the handler validates `srtFields` and the file). */
export const srtForm = (srtFields as Joi.ObjectSchema).keys({
  file: Joi.binary().required().description('the subtitle file (.srt, UTF-8 or UTF-16), at most 10 MB'),
  voiceId: Joi.string().trim().max(200).allow(null, '').description('catalogue id, display name or your own clone; omitted: the default voice').example('vi-north-female-mai'),
  aiRefine: Joi.boolean().default(false).description('moderate and normalise each cue, for a surcharge'),
});

/** Responses (for the API reference, checked against real responses by the tests). */

const cueReport = Joi.object({
  index: Joi.number().integer().required(),
  start: Joi.number().required().description('seconds'),
  end: Joi.number().required(),
  speechSeconds: Joi.number().required().description('speech before any tempo change'),
  tempo: Joi.number().required().description('1 = unchanged; above 1 the speech was sped up, pitch kept'),
  overflow: Joi.number().required().description('seconds the speech runs past the cue into the gap after it'),
  cut: Joi.number().required().description('seconds cut at the next cue (0 unless even the gap was too short)'),
  speechEnd: Joi.number().required().description('where the cue\'s speech ends in the file'),
});

export const srtResponse = Joi.object({
  srtId: Joi.string().required(),
  audioUrl: Joi.string().uri().required().description('the timecode-aligned WAV, presigned, valid 24 hours'),
  audioUrlExpiresIn: Joi.number().integer().required(),
  duration: Joi.number().required(),
  sampleRate: Joi.number().integer().required(),
  characters: Joi.number().integer().required().description('characters submitted (after NFC); billing counts at least 50'),
  cues: Joi.array().items(cueReport).required(),
});

/** What a 400 about the file may add. */
export const srtRefusalFields = Joi.object({
  cue: Joi.number().integer().description('with `SRT_INVALID` and `SRT_TOO_LONG`: the cue number'),
  line: Joi.number().integer().description('with `SRT_INVALID`: the line of the file'),
  engine: Joi.string().description('with `CLONE_ENGINE_RETIRED`'),
});
