import Joi from 'joi';
import { EMOTIONS } from '../../config/emotions.ts';

/** SPEC Limits: 1 to 50 turns. */
export const MAX_TURNS = 50;
/** One turn's text; the whole dialogue is held to the 50,000 characters of the other routes. */
export const MAX_TURN_CHARS = 5_000;
export const MAX_DIALOGUE_CHARS = 50_000;
export const MAX_PAUSE_MS = 3_000;

export interface DialogueInput {
  text: string;
  voiceId: string;
  emotion: string;
}

/**
 * Field names follow ElevenLabs' text-to-dialogue (`inputs: [{ text, voice_id }]`)
 * in this API's camelCase; no alias (`turns`, `voice_id`) is accepted, so a
 * request can only mean one thing.
 */
export interface DialogueBody {
  inputs: DialogueInput[];
  engine?: string | null;
  aiRefine: boolean;
  /** silence between two turns; the plugin's DIALOGUE_PAUSE_MS when omitted */
  pauseMs?: number;
}

const turn = Joi.object<DialogueInput>({
  text: Joi.string().max(MAX_TURN_CHARS).required().messages({
    'string.empty': '{{#label}} must not be empty',
    'string.max': `{{#label}} must be at most ${MAX_TURN_CHARS} characters`,
  }),
  voiceId: Joi.string().trim().max(200).required(),
  emotion: Joi.string().valid(...EMOTIONS).default('natural'),
});

export const dialogueBody = Joi.object<DialogueBody>({
  inputs: Joi.array().items(turn).min(1).max(MAX_TURNS).required().messages({
    'array.min': `"inputs" must contain 1 to ${MAX_TURNS} turns; it is empty`,
    'array.max': `"inputs" must contain 1 to ${MAX_TURNS} turns`,
    'array.base': '"inputs" must be an array of turns, each with text, voiceId and emotion',
  }),
  engine: Joi.string().trim().max(40).allow(null, ''),
  aiRefine: Joi.boolean().default(false),
  pauseMs: Joi.number().integer().min(0).max(MAX_PAUSE_MS).description('silence between two turns; default DIALOGUE_PAUSE_MS (350)'),
}).required()
  .example({
    inputs: [
      { text: 'Chào chị, hôm nay chị có khỏe không?', voiceId: 'vi-north-male-minh' },
      { text: 'Cảm ơn em, chị khỏe. Còn em thì sao?', voiceId: 'vi-south-female-lan' },
    ],
  });

/** Responses (for the API reference, checked against real responses by the tests). */

export const dialogueResponse = Joi.object({
  dialogueId: Joi.string().required().example('dlg_0b6f1f5e-2a8c-4d7e-9f3a-5c1b2d3e4f60'),
  audioUrl: Joi.string().uri().required().description('the WAV, presigned, valid 24 hours'),
  audioUrlExpiresIn: Joi.number().integer().required().description('seconds (86400)'),
  duration: Joi.number().required().description('seconds'),
  sampleRate: Joi.number().integer().required().example(48000),
  characters: Joi.number().integer().required().description('characters submitted (after NFC); billing counts at least 50'),
  voiceSegments: Joi.array().items(Joi.object({
    inputIndex: Joi.number().integer().required(),
    voiceId: Joi.string().required(),
    start: Joi.number().required().description('seconds from the start of the file'),
    end: Joi.number().required(),
  })).required().description('where each turn sits in the file'),
});
