import Joi from 'joi';

/** The 410 of the closed cloning routes: the native envelope plus where cloning lives now. */
export const closedRefusalFields = Joi.object({
  cloneUrl: Joi.string().uri().required().description('the web studio where cloned voices are made').example('https://studio.vieneu.vn/voices/clone'),
});
