import Joi from 'joi';
import { LIMITS } from './rules.ts';
import type { BookNotification, BookStatus, ChapterStatus, WaitingReason } from './store/records.ts';

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
  // No length of its own: a chapter over its limit, in one segment or many, is chapter_over_plan_limit (SPEC), capped by the body limit.
  text: Joi.string().pattern(/\S/u).required()
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

/** Responses (for the API reference, checked against real responses by the tests): what view.ts and chapters.ts build. */

const BOOK_STATUSES = ['draft', 'queued', 'rendering', 'completed', 'partial', 'failed', 'cancelled'] as const satisfies readonly BookStatus[];
const CHAPTER_STATUSES = ['pending', 'rendering', 'rendered', 'mastering', 'completed', 'failed', 'cancelled'] as const satisfies readonly ChapterStatus[];
const WAITING_REASONS = ['gpu_busy', 'quota', 'queue_full'] as const satisfies readonly WaitingReason[];
const NOTIFICATION_KINDS = ['audiobook.completed', 'audiobook.partial', 'audiobook.failed'] as const satisfies readonly BookNotification['kind'][];

const count = () => Joi.number().integer().min(0);
const isoDate = () => Joi.string().isoDate();
const AUDIO_FORMATS = ['mp3', 'wav'] as const;

const chapterFields = {
  index: Joi.number().integer().min(1).required().description('1-based'),
  title: Joi.string().required(),
  status: Joi.string().valid(...CHAPTER_STATUSES).required(),
  characters: count().required().description('billed characters: the title and every segment, after NFC'),
  segments: count().required().description('segment count'),
  tokenCost: Joi.number().allow(null).required().description('tokens charged for its render; null until it starts rendering'),
  progress: Joi.object({
    partsDone: count().required(),
    partsPlanned: count().required().description('a part is about 3 minutes of speech'),
  }).allow(null).required().description('render parts done versus planned; null before it starts'),
  durationSeconds: Joi.number().allow(null).required(),
  audioFormat: Joi.string().valid(...AUDIO_FORMATS).allow(null).required().description('once `completed`: `mp3`, or `wav` only if mastering failed'),
  error: Joi.string().allow(null).required(),
  retryAt: isoDate().allow(null).required().description('while `pending` after a failed attempt: when it is tried again'),
  completedAt: isoDate().allow(null).required(),
};

/** A chapter in a list item: no download link. */
const listedChapter = Joi.object(chapterFields);

const chapterWithLink = Joi.object({
  ...chapterFields,
  audioUrl: Joi.string().uri().allow(null).required().description('once `completed`: presigned, valid 24 hours'),
  audioUrlExpiresAt: isoDate().allow(null).required(),
});

const totals = Joi.object({
  chapters: count().required(),
  completedChapters: count().required(),
  characters: count().required(),
  estimatedTokens: Joi.number().min(0).required().description('tokens for the chapters not yet rendered'),
  tokensCharged: Joi.number().min(0).required(),
  durationSeconds: Joi.number().min(0).required().description('audio seconds of the completed chapters'),
});

const bookOf = (chapter: Joi.ObjectSchema) => Joi.object({
  id: Joi.string().required().example('abk_3f2c9a1e5b7d4e8f9a0b1c2d3e4f5a6b'),
  title: Joi.string().required().example('Dế Mèn phiêu lưu ký'),
  author: Joi.string().allow(null).required().example('Tô Hoài'),
  engine: Joi.string().required(),
  status: Joi.string().valid(...BOOK_STATUSES).required(),
  narratorVoice: Joi.string().required().description('reads titles and every segment without a speaker'),
  cast: Joi.array().items(Joi.object({ speaker: Joi.string().required(), voiceId: Joi.string().required() })).required(),
  waitingReason: Joi.string().valid(...WAITING_REASONS).allow(null).required()
    .description('while started: `gpu_busy` (books render only while the GPUs are idle), `quota` (plan limit hit, retried automatically), `queue_full`'),
  error: Joi.string().allow(null).required(),
  totals: totals.required(),
  otherBooksWaiting: count().allow(null).required().description('while started: other started books (books take turns, a chapter each)'),
  chapterCharsMax: count().required().description('longest chapter your plans can render; 60000 when none has a tighter cap'),
  chapters: Joi.array().items(chapter).required(),
  createdAt: isoDate().required(),
  completedAt: isoDate().allow(null).required(),
});

export const bookResponse = bookOf(chapterWithLink).description('An audiobook with its chapters and their 24-hour download links');

export const bookListResponse = Joi.object({
  items: Joi.array().items(bookOf(listedChapter)).required().description('newest first; chapters without download links'),
  page: Joi.number().integer().min(1).required(),
  limit: Joi.number().integer().min(1).required(),
  total: count().required(),
});

export const chapterAddedResponse = Joi.object({
  bookId: Joi.string().required(),
  chapter: chapterWithLink.required(),
  totals: totals.required(),
  chapterCharsMax: count().required(),
});

export const libraryResponse = Joi.object({
  items: Joi.array().items(Joi.object({
    id: Joi.string().required().description('`<bookId>:<chapterIndex>`'),
    bookId: Joi.string().required(),
    bookTitle: Joi.string().required(),
    author: Joi.string().allow(null).required(),
    chapterIndex: Joi.number().integer().min(1).required(),
    title: Joi.string().required(),
    audioFormat: Joi.string().valid(...AUDIO_FORMATS).required(),
    durationSeconds: Joi.number().required(),
    audioUrl: Joi.string().uri().required().description('presigned, valid 24 hours'),
    audioUrlExpiresAt: isoDate().required(),
    completedAt: isoDate().required(),
  })).required().description('finished chapters, newest first'),
  page: Joi.number().integer().min(1).required(),
  limit: Joi.number().integer().min(1).required(),
  total: count().required(),
});

export const notificationsResponse = Joi.object({
  items: Joi.array().items(Joi.object({
    id: Joi.string().required(),
    kind: Joi.string().valid(...NOTIFICATION_KINDS).required(),
    message: Joi.string().required(),
    bookId: Joi.string().required(),
    createdAt: isoDate().required(),
  })).required().description('newest first, one per finished book run'),
});

/** Fields the audiobook refusals add to the native envelope. */

export const chapterRefusalFields = Joi.object({
  chapterCharsMax: count().description('with `chapter_over_plan_limit`'),
  characters: count().description('with `chapter_over_plan_limit` and `book_too_long`: the chapter\'s, or the book\'s with it'),
  chaptersMax: count().description('with `too_many_chapters`'),
  bookCharsMax: count().description('with `book_too_long`'),
  castMax: count().description('with `too_many_voices`'),
  speakers: Joi.array().items(Joi.string()).description('with `unknown_speaker`'),
});

export const chapterConflictFields = Joi.object({
  chapter: Joi.number().integer().min(1).description('the chapter concerned'),
  segments: count().description('with `segment_mismatch`: the chapter\'s real segment count'),
  endsWith: Joi.string().description('with `segment_mismatch`: the last words of its last segment'),
  speaker: Joi.string().description('with `cast_conflict`'),
  voiceId: Joi.string().description('with `cast_conflict`: the voice the speaker already has'),
});

export const insufficientTokensFields = Joi.object({
  chapter: Joi.number().integer().min(1).description('the first chapter no plan can pay when its turn comes (absent when the whole book is over what is left)'),
  chapterTitle: Joi.string(),
});

export const cancelConflictFields = Joi.object({
  status: Joi.string().valid(...BOOK_STATUSES).description('the book\'s status'),
});
