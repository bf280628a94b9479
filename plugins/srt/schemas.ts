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
