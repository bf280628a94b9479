import Joi from 'joi';

/** `GET /balance` (SPEC: Balance), for the API reference. */

const cap = Joi.object({
  limit: Joi.number().required(),
  used: Joi.number().required(),
  remaining: Joi.number().required(),
  resetAt: Joi.string().isoDate().required().description('when the cap rolls over'),
}).allow(null).description('null when the plan has no such cap');

export const balanceResponse = Joi.object({
  remaining: Joi.number().required().description('the most any single paying grant can spend in one call now (never a sum); a synthesis needs at least 50 x the engine multiplier').example(120000),
  spendableTokens: Joi.number().required().description('what can be spent request after request across every grant that may pay, each within its caps').example(450000),
  totalRemainingTokens: Joi.number().required().description('sum over all active grants').example(500000),
  plan: Joi.object({
    grantId: Joi.string().required(),
    name: Joi.string().required().example('pro'),
    totalTokens: Joi.number().required(),
    usedTokens: Joi.number().required(),
    remainingTokens: Joi.number().required(),
    daily: cap.required(),
    weekly: cap.required(),
    expiresAt: Joi.string().isoDate().allow(null).required().description('null for a gift grant'),
    isGift: Joi.boolean().required().description('a gift has no daily or weekly cap and never expires'),
  }).allow(null).required().description('the grant `remaining` is measured on; null without one'),
});
