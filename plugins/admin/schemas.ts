import Joi from 'joi';
import { isoCalendarDate } from '../../core/http/validate.ts';

export const accountBody = Joi.object({
  name: Joi.string().trim().min(1).max(200).required(),
  email: Joi.string().email().allow(null),
});

export const grantBody = Joi.object({
  plan: Joi.string().trim().max(60),
  totalTokens: Joi.number().integer().min(0).required(),
  dailyCap: Joi.number().integer().min(1).allow(null),
  weeklyCap: Joi.number().integer().min(1).allow(null),
  // Stored as the instant it names, in one spelling (UTC), whatever offset it was sent with.
  expiresAt: isoCalendarDate().custom((value: Date) => value.toISOString()).allow(null),
  expiresInDays: Joi.number().integer().min(1).max(3650).allow(null),
  isGift: Joi.boolean().default(false),
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
  referenceAvailable: Joi.boolean().default(true),
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
