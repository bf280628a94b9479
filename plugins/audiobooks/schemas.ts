import Joi from 'joi';
import { LIMITS } from './rules.ts';

/** Request bodies and queries of the audiobook routes (validated by core: 400, one message per field). */

export interface CastInput {
  speaker: string;
  voiceId: string;
}

export interface SegmentInput {
  speaker: string | null;
  text: string;
  sceneBreak: boolean;
}

export interface CreateBookBody {
  title: string;
  author: string | null;
  narratorVoice: string;
  cast: CastInput[];
  engine?: string;
}

export interface AddChapterBody {
  title?: string;
  segments: SegmentInput[];
  appendTo?: number;
  afterSegment?: number;
  cast: CastInput[];
}

export interface PageQuery {
  page: number;
  limit: number;
}

const castEntry = Joi.object<CastInput>({
  speaker: Joi.string().trim().min(1).max(100).required(),
  voiceId: Joi.string().trim().min(1).max(200).required(),
});

const cast = Joi.array().items(castEntry).max(LIMITS.castVoices).unique('speaker').default([])
  .messages({ 'array.unique': '"cast" names speaker {#value.speaker} twice' });

const segment = Joi.object<SegmentInput>({
  speaker: Joi.string().trim().min(1).max(100).allow(null).default(null),
  text: Joi.string().pattern(/\S/u).max(LIMITS.chapterChars).required()
    .messages({ 'string.pattern.base': '"text" of a segment must contain something to read' }),
  sceneBreak: Joi.boolean().default(false),
});

export const createBookBody = Joi.object<CreateBookBody>({
  title: Joi.string().trim().min(1).max(200).required(),
  author: Joi.string().trim().min(1).max(120).allow(null).default(null),
  narratorVoice: Joi.string().trim().min(1).max(200).required(),
  cast,
  engine: Joi.string().max(20),
});

export const addChapterBody = Joi.object<AddChapterBody>({
  title: Joi.string().trim().min(1).max(200).when('appendTo', { is: Joi.exist(), then: Joi.forbidden(), otherwise: Joi.required() }),
  segments: Joi.array().items(segment).min(1).max(20_000).required(),
  appendTo: Joi.number().integer().min(1).max(LIMITS.chapters),
  afterSegment: Joi.number().integer().min(0).when('appendTo', { is: Joi.exist(), otherwise: Joi.forbidden() })
    .messages({ 'any.unknown': '"afterSegment" is allowed only with "appendTo"' }),
  cast,
});

export const pageQuery = Joi.object<PageQuery>({
  page: Joi.number().integer().min(1).max(100_000).default(1),
  limit: Joi.number().integer().min(1).max(50).default(20),
});

export const notificationsQuery = Joi.object<{ limit: number }>({
  limit: Joi.number().integer().min(1).max(100).default(20),
});
