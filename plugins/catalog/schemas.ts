import Joi from 'joi';

export const engineQuery = Joi.object<{ engine?: string }>({
  engine: Joi.string().trim().max(40).description('engine key (`v4`); omitted: the default engine; `v3` is retired (400)').example('v4'),
});

/** Responses (for the API reference, checked against real responses by the tests). */

const engine = Joi.object({
  key: Joi.string().required().example('v4'),
  label: Joi.string().required().example('VieNeu v4'),
  isDefault: Joi.boolean().required().description('used when a request names no engine'),
  sampleRate: Joi.number().integer().required().example(48000),
  billingMultiplier: Joi.number().required().description('multiplies the per-character charge').example(3),
  features: Joi.array().items(Joi.string()).required().description('what the engine serves here: `generate`, `clone`, `dialogue`, `stream`, `dub`, `srt`; `stream` decides whether POST /tts/stream accepts it'),
});

export const enginesResponse = Joi.object({
  engines: Joi.array().items(engine).required(),
  globalMultiplier: Joi.number().required().description('platform-wide factor on top of the engine multiplier').example(1.3),
});

export const emotionTagsResponse = Joi.object({
  engine: Joi.string().required().example('v4'),
  styles: Joi.array().items(Joi.string()).required().description('reading styles the engine renders (none on v4: `emotion` is accepted, billed and ignored)'),
  cueTags: Joi.array().items(Joi.string()).required().description('inline tags written in the text').example(['[cười]', '[thở dài]', '[hắng giọng]']),
  emotions: Joi.array().items(Joi.string()).required().description('values the `emotion` field accepts'),
});

const voice = Joi.object({
  id: Joi.string().required().description('pass as `voiceId` (or `voice` on /audio/speech); cloned voices are `clone_<uuid>`').example('vi-north-female-mai'),
  name: Joi.string().required().description('display name, also accepted in place of the id').example('Mai'),
  description: Joi.string().allow(null).example('Giọng nữ miền Bắc, trong và rõ ràng, hợp đọc tin tức'),
  gender: Joi.string().allow(null).example('female'),
  region: Joi.string().allow(null).example('north'),
  engine: Joi.string().required().example('v4'),
  kind: Joi.string().valid('catalog', 'cloned').required(),
});

export const voicesResponse = Joi.object({
  voices: Joi.array().items(voice).required(),
  count: Joi.number().integer().min(0).required(),
  error: Joi.string().description('present when your cloned voices could not be read; the catalogue is complete'),
});

export const audioVoicesResponse = Joi.object({
  voices: Joi.array().items(Joi.string()).required().description('voice ids').example(['vi-north-female-mai', 'vi-south-male-nam']),
});
