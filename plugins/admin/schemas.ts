import Joi from 'joi';
import { isoCalendarDate } from '../../core/http/validate.ts';

export const accountBody = Joi.object({
  name: Joi.string().trim().min(1).max(200).required(),
  email: Joi.string().email().allow(null),
});

/**
 * The most tokens one grant may hold, and the highest cap: /balance sums the
 * grants of an account, and sums of amounts this size stay exact integers
 * (below 2^53) for up to 9,000 grants, where MAX_SAFE_INTEGER each lost a token.
 */
export const MAX_GRANT_TOKENS = 1_000_000_000_000;

// JSON carries numbers and booleans as such: strict, so "100" or "true" is refused rather than read as 100 or true.
const tokenAmount = () => Joi.number().strict().integer().max(MAX_GRANT_TOKENS);
const flag = () => Joi.boolean().strict();

export const grantBody = Joi.object({
  plan: Joi.string().trim().max(60),
  totalTokens: tokenAmount().min(0).required(),
  dailyCap: tokenAmount().min(1).allow(null),
  weeklyCap: tokenAmount().min(1).allow(null),
  // Stored as the instant it names, in one spelling (UTC), whatever offset it was sent with.
  expiresAt: isoCalendarDate().custom((value: Date) => value.toISOString()).allow(null),
  expiresInDays: Joi.number().strict().integer().min(1).max(3650).allow(null),
  isGift: flag().default(false),
  engines: Joi.array().items(Joi.string().valid('v4')).min(1),
}).oxor('expiresAt', 'expiresInDays');

export const keyBody = Joi.object({
  kind: Joi.string().valid('live', 'test').default('live'),
  grantId: Joi.string().allow(null),
  name: Joi.string().max(100).allow(null),
});

export const grantStatusBody = Joi.object({
  status: Joi.string().valid('active', 'replaced', 'revoked').required(),
});

export const cloneBody = Joi.object({
  name: Joi.string().trim().min(1).max(100).required(),
  engine: Joi.string().valid('v4', 'v3').default('v4'),
  baseVoiceId: Joi.string().required(),
  referenceAvailable: flag().default(true),
});

export const bootstrapBody = Joi.object({
  name: Joi.string().trim().min(1).max(200).required(),
  email: Joi.string().email().allow(null),
  kind: Joi.string().valid('live', 'test').default('live'),
  grant: grantBody.fork(['totalTokens'], (s) => s.optional()),
});

export const userBody = Joi.object({
  email: Joi.string().email().max(254).required(),
  // Users who only sign in through the upstream OpenID provider have no password.
  password: Joi.string().min(10).max(200).allow(null),
  name: Joi.string().trim().max(200).allow(null),
});
