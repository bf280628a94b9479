import Joi from 'joi';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../core/ports/webhooks.ts';

export interface CreateWebhookBody {
  url: string;
  description?: string | null;
  apiKeyId?: string | null;
  events: WebhookEventType[];
}

/** The URL rules themselves (https, no credentials, public address) live in core/net/destination.ts. */
export const createWebhookBody = Joi.object<CreateWebhookBody>({
  url: Joi.string().trim().min(1).max(2048).required(),
  description: Joi.string().trim().max(500).allow('', null),
  apiKeyId: Joi.string().trim().max(100).allow(null),
  events: Joi.array()
    .items(Joi.string().valid(...WEBHOOK_EVENT_TYPES))
    .min(1)
    .unique()
    .default(() => [...WEBHOOK_EVENT_TYPES]),
}).required();

export const deliveriesQuery = Joi.object<{ limit: number }>({
  limit: Joi.number().integer().min(1).max(100).default(50),
});
