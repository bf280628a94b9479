import Joi from 'joi';

export const engineQuery = Joi.object({
  engine: Joi.string().trim().max(40),
});
