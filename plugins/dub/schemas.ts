import Joi from 'joi';
import { EMOTIONS } from '../../config/emotions.ts';

/** The form fields of `POST /dub` besides `audio`. */
export interface DubFields {
  voiceId: string;
  emotion: string;
  temperature?: number;
  engine?: string | null;
}

export const dubFields = Joi.object<DubFields>({
  voiceId: Joi.string().trim().max(200).required(),
  emotion: Joi.string().valid(...EMOTIONS).default('natural'),
  temperature: Joi.number().min(0).max(2),
  engine: Joi.string().trim().max(40).allow(null, ''),
}).required();
