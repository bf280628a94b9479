import Joi from 'joi';

export const engineQuery = Joi.object<{ engine?: string }>({
  engine: Joi.string().trim().max(40),
});
