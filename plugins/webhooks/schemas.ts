import Joi from 'joi';
import { WEBHOOK_ERRORS, WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT, type WebhookEventType } from '../../core/ports/webhooks.ts';

export interface CreateWebhookBody {
  url: string;
  description?: string | null;
  apiKeyId?: string | null;
  events: WebhookEventType[];
}

/** The URL rules themselves (https, no credentials, public address) live in core/net/destination.ts. */
export const createWebhookBody = Joi.object<CreateWebhookBody>({
  url: Joi.string().trim().min(1).max(2048).required().description('https only, a public address, no credentials; redirects are not followed'),
  description: Joi.string().trim().max(500).allow('', null),
  apiKeyId: Joi.string().trim().max(100).allow(null).description('only jobs submitted with this key; omitted: every key of the account'),
  events: Joi.array()
    .items(Joi.string().valid(...WEBHOOK_EVENT_TYPES))
    .min(1)
    .unique()
    .default(() => [...WEBHOOK_EVENT_TYPES]),
}).required()
  .example({ url: 'https://hooks.example.vn/vieneu', description: 'Thông báo khi tệp âm thanh sẵn sàng', events: ['tts.job.completed', 'tts.job.failed'] });

export const deliveriesQuery = Joi.object<{ limit: number }>({
  limit: Joi.number().integer().min(1).max(100).default(50),
});

export const notificationsQuery = Joi.object<{ limit: number }>({
  limit: Joi.number().integer().min(1).max(100).default(20),
});

/** Responses (SPEC: Webhook endpoint, Webhook delivery record), for the API reference. */

export const endpointResponse = Joi.object({
  id: Joi.string().required().example('we_4f3e2d1c0b9a8f7e6d5c4b3a'),
  url: Joi.string().required().example('https://hooks.example.vn/vieneu'),
  description: Joi.string().allow(null).required().example('Thông báo khi tệp âm thanh sẵn sàng'),
  apiKeyId: Joi.string().allow(null).required().description('only jobs of this key; null: every key of the account'),
  events: Joi.array().items(Joi.string().valid(...WEBHOOK_EVENT_TYPES)).required(),
  status: Joi.string().valid('ENABLED', 'DISABLED').required(),
  secretPrefix: Joi.string().required().description('first characters of the current signing secret (`whsec_…`)'),
  createdAt: Joi.string().isoDate().required(),
});

const withSecret = endpointResponse.keys({
  secret: Joi.string().pattern(/^whsec_/).required().description('the signing secret, shown this once'),
});

export const createdEndpointResponse = withSecret;

export const rotatedEndpointResponse = withSecret.keys({
  previousSecretExpiresAt: Joi.string().isoDate().required().description('the previous secret still verifies until then (24 hours)'),
});

export const endpointListResponse = Joi.array().items(endpointResponse);

export const deletedEndpointResponse = Joi.object({ id: Joi.string().required(), deleted: Joi.valid(true).required() });

/** One delivery record: of a job event, or of a `webhook.test` event sent by `POST /webhooks/{id}/test`. */
export const deliveryResponse = Joi.object({
  id: Joi.string().required(),
  eventId: Joi.string().required().description('the event\'s `evt_…` id (`evt_t_…` for a test event)'),
  eventType: Joi.string().valid(...WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT).required(),
  status: Joi.string().valid('PENDING', 'DELIVERED', 'DEAD').required().description('`DEAD` after the last attempt failed; never resent'),
  attempts: Joi.number().integer().required(),
  lastStatusCode: Joi.number().integer().allow(null).required(),
  lastError: Joi.string().valid(...WEBHOOK_ERRORS).allow(null).required(),
  lastDurationMs: Joi.number().allow(null).required(),
  lastAttemptAt: Joi.string().isoDate().allow(null).required(),
  deliveredAt: Joi.string().isoDate().allow(null).required(),
  nextAttemptAt: Joi.string().isoDate().allow(null).required(),
  createdAt: Joi.string().isoDate().required(),
});

export const deliveriesResponse = Joi.array().items(deliveryResponse);

/** SPEC Delivery semantics: "After the last attempt the delivery is marked DEAD, a notification appears in the account." */
export const notificationsResponse = Joi.object({
  items: Joi.array().items(Joi.object({
    id: Joi.string().required().description('`ntf_…`, one per dead delivery'),
    kind: Joi.valid('webhook.delivery.dead').required(),
    message: Joi.string().required(),
    subject: Joi.object({
      endpointId: Joi.string().required(), deliveryId: Joi.string().required(), eventId: Joi.string().required(), jobId: Joi.string(),
    }).unknown(true).required(),
    createdAt: Joi.string().isoDate().required(),
  })).required(),
});
