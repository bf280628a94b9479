import Joi from 'joi';

export const MAX_WINDOW_DAYS = 92;
export const DEFAULT_WINDOW_DAYS = 30;

export interface UsageQuery {
  from?: Date;
  to?: Date;
  scope: 'key' | 'account';
}

export const usageQuery = Joi.object<UsageQuery>({
  from: Joi.date().iso().messages({ 'date.format': 'from must be an ISO 8601 date', 'date.base': 'from must be an ISO 8601 date' }),
  to: Joi.date().iso().messages({ 'date.format': 'to must be an ISO 8601 date', 'date.base': 'to must be an ISO 8601 date' }),
  scope: Joi.string().valid('key', 'account').default('key'),
});
