import { randomBytes } from 'node:crypto';
import { DomainError } from '../../core/errors.ts';
import type { KeysStore } from '../../core/ports/documents.ts';
import { WEBHOOK_TEST_EVENT, type AccountNotification, type WebhookDelivery, type WebhookEndpoint, type WebhookEndpointStatus, type WebhooksStore } from '../../core/ports/webhooks.ts';
import { checkDestination, DestinationError, type DestinationPolicy } from '../../core/net/destination.ts';
import type { CreateWebhookBody } from './schemas.ts';

/** Webhook management (SPEC: Webhook management), no Koa in it. Another account's endpoint is 404, never 403. */

export const PREVIOUS_SECRET_LIFETIME_MS = 24 * 60 * 60 * 1000;

export interface WebhookServiceDeps {
  store: WebhooksStore;
  keys: Pick<KeysStore, 'get'>;
  policy: DestinationPolicy;
  now?: () => Date;
}

export interface EndpointView {
  id: string;
  url: string;
  description: string | null;
  apiKeyId: string | null;
  events: string[];
  status: string;
  secretPrefix: string;
  createdAt: string;
}

export interface DeliveryView {
  id: string;
  eventId: string;
  eventType: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  lastDurationMs: number | null;
  lastAttemptAt: string | null;
  deliveredAt: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
}

export function endpointView(e: WebhookEndpoint): EndpointView {
  return {
    id: e.id, url: e.url, description: e.description, apiKeyId: e.apiKeyId, events: e.events,
    status: e.status, secretPrefix: e.secretPrefix, createdAt: e.createdAt,
  };
}

export function deliveryView(d: WebhookDelivery): DeliveryView {
  return {
    id: d.id, eventId: d.eventId, eventType: d.eventType, status: d.status, attempts: d.attempts,
    lastStatusCode: d.lastStatusCode, lastError: d.lastError, lastDurationMs: d.lastDurationMs,
    lastAttemptAt: d.lastAttemptAt, deliveredAt: d.deliveredAt, nextAttemptAt: d.nextAttemptAt, createdAt: d.createdAt,
  };
}

export const newSigningSecret = () => `whsec_${randomBytes(24).toString('base64url')}`;
const newEndpointId = () => `we_${randomBytes(12).toString('hex')}`;
const newTestEventId = () => `evt_t_${randomBytes(12).toString('hex')}`;
const newDeliveryId = () => `wd_${randomBytes(16).toString('hex')}`;
const SECRET_PREFIX_LENGTH = 10;

const REFUSAL_CODES = {
  invalid_url: 'WEBHOOK_URL_INVALID',
  not_https: 'WEBHOOK_URL_NOT_HTTPS',
  credentials: 'WEBHOOK_URL_CREDENTIALS',
  blocked_private_address: 'WEBHOOK_URL_BLOCKED',
  dns_failure: 'WEBHOOK_URL_UNRESOLVABLE',
} as const;

export function createWebhookService(deps: WebhookServiceDeps) {
  const now = deps.now ?? (() => new Date());

  async function owned(accountId: string, endpointId: string): Promise<WebhookEndpoint> {
    const endpoint = await deps.store.getEndpoint(endpointId);
    if (!endpoint || endpoint.accountId !== accountId) throw new DomainError('not_found', 'Webhook endpoint not found.', { code: 'WEBHOOK_NOT_FOUND' });
    return endpoint;
  }

  async function checkUrl(url: string): Promise<void> {
    try {
      await checkDestination(url, deps.policy);
    } catch (err) {
      if (!(err instanceof DestinationError)) throw err;
      throw new DomainError('invalid', [err.message], { code: REFUSAL_CODES[err.reason], param: 'url' });
    }
  }

  async function checkKey(accountId: string, apiKeyId: string): Promise<void> {
    const key = await deps.keys.get(apiKeyId);
    // A key of another account is refused with the same words as an unknown one: ids are not probed this way.
    if (!key || key.accountId !== accountId || key.revokedAt) {
      throw new DomainError('invalid', ['apiKeyId must name an active API key of this account.'], { code: 'WEBHOOK_API_KEY_UNKNOWN', param: 'apiKeyId' });
    }
  }

  return {
    async create(accountId: string, body: CreateWebhookBody): Promise<EndpointView & { secret: string }> {
      await checkUrl(body.url);
      if (body.apiKeyId) await checkKey(accountId, body.apiKeyId);
      const at = now().toISOString();
      const secret = newSigningSecret();
      const endpoint = await deps.store.createEndpoint({
        id: newEndpointId(),
        accountId,
        url: body.url,
        description: body.description || null,
        apiKeyId: body.apiKeyId || null,
        events: body.events,
        status: 'ENABLED',
        secrets: [{ secret, createdAt: at, expiresAt: null }],
        secretPrefix: secret.slice(0, SECRET_PREFIX_LENGTH),
        createdAt: at,
      });
      return { ...endpointView(endpoint), secret };
    },

    async list(accountId: string): Promise<EndpointView[]> {
      return (await deps.store.listEndpoints(accountId)).map(endpointView);
    },

    async get(accountId: string, endpointId: string): Promise<EndpointView> {
      return endpointView(await owned(accountId, endpointId));
    },

    /** Pending deliveries stay recorded; their next attempt fails `endpoint_unavailable`. */
    async remove(accountId: string, endpointId: string): Promise<{ id: string; deleted: true }> {
      await owned(accountId, endpointId);
      await deps.store.deleteEndpoint(endpointId);
      return { id: endpointId, deleted: true };
    },

    /** SPEC: a dead delivery's notification "appears in the account". */
    async notifications(accountId: string, limit: number): Promise<{ items: Array<Omit<AccountNotification, 'accountId'>> }> {
      const items = await deps.store.listNotifications(accountId, limit);
      return { items: items.map(({ accountId: _owner, ...notification }) => notification) };
    },

    async deliveries(accountId: string, endpointId: string, limit: number): Promise<DeliveryView[]> {
      await owned(accountId, endpointId);
      return (await deps.store.listDeliveries(endpointId, limit)).map(deliveryView);
    },

    async rotateSecret(accountId: string, endpointId: string): Promise<EndpointView & { secret: string; previousSecretExpiresAt: string }> {
      await owned(accountId, endpointId);
      const at = now();
      const secret = newSigningSecret();
      const previousSecretExpiresAt = new Date(at.getTime() + PREVIOUS_SECRET_LIFETIME_MS).toISOString();
      const endpoint = await deps.store.rotateSecret(endpointId, { secret, createdAt: at.toISOString(), expiresAt: null }, previousSecretExpiresAt, at.toISOString());
      if (!endpoint) throw new DomainError('not_found', 'Webhook endpoint not found.', { code: 'WEBHOOK_NOT_FOUND' });
      return { ...endpointView(endpoint), secret, previousSecretExpiresAt };
    },

    /**
     * Pauses (`DISABLED`) or resumes (`ENABLED`) an endpoint. While paused no
     * delivery is recorded for it, and one already recorded fails
     * `endpoint_unavailable` when it is attempted (and is not resent after a resume).
     */
    async setStatus(accountId: string, endpointId: string, status: WebhookEndpointStatus): Promise<EndpointView> {
      const endpoint = await owned(accountId, endpointId);
      if (endpoint.status !== status && !(await deps.store.setEndpointStatus(endpointId, status))) {
        throw new DomainError('not_found', 'Webhook endpoint not found.', { code: 'WEBHOOK_NOT_FOUND' });
      }
      return endpointView({ ...endpoint, status });
    },

    /** Queues a signed `webhook.test` event for the endpoint, attempted once by the dispatcher; answers its delivery record. */
    async sendTest(accountId: string, endpointId: string): Promise<DeliveryView> {
      const endpoint = await owned(accountId, endpointId);
      if (endpoint.status !== 'ENABLED') {
        throw new DomainError('conflict', 'This endpoint is disabled: enable it before sending a test event.', { code: 'WEBHOOK_DISABLED' });
      }
      const at = now().toISOString();
      const eventId = newTestEventId();
      const delivery = {
        id: newDeliveryId(), endpointId, accountId, eventId, eventType: WEBHOOK_TEST_EVENT,
        payload: { type: WEBHOOK_TEST_EVENT, eventId, accountId, endpointId, at }, createdAt: at, nextAttemptAt: at,
      };
      await deps.store.enqueueDeliveries([delivery]);
      const stored = await deps.store.getDelivery(delivery.id);
      if (!stored) throw new Error(`test delivery ${delivery.id} was not recorded`);
      return deliveryView(stored);
    },
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
