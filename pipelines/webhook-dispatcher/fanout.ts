import { createHash } from 'node:crypto';
import type { Bus, Subscription } from '../../core/ports/bus.ts';
import { TOPICS } from '../../core/ports/bus.ts';
import type { JobEvent } from '../../core/ports/job-events.ts';
import type { Logger } from '../../core/logger.ts';
import type { NewDelivery, WebhookEndpoint, WebhooksStore } from '../../core/ports/webhooks.ts';
import { WEBHOOK_EVENT_TYPES } from '../../core/ports/webhooks.ts';
import type { Clock } from './schedule.ts';

/**
 * Turns each job event into one delivery record per interested endpoint of
 * the account. The delivery id is derived from (event id, endpoint id) and
 * the store refuses a second record for the pair, so a redelivered bus
 * message creates nothing new.
 */
export const FANOUT_GROUP = 'webhook-dispatcher';

export function deliveryId(eventId: string, endpointId: string): string {
  return `wd_${createHash('sha256').update(`${eventId}\n${endpointId}`).digest('hex').slice(0, 32)}`;
}

export function endpointWants(endpoint: WebhookEndpoint, event: JobEvent): boolean {
  return (
    endpoint.status === 'ENABLED' &&
    endpoint.accountId === event.accountId &&
    endpoint.events.includes(event.type) &&
    (endpoint.apiKeyId === null || endpoint.apiKeyId === event.keyId)
  );
}

export function deliveriesFor(event: JobEvent, endpoints: WebhookEndpoint[], now: Date): NewDelivery[] {
  const at = now.toISOString();
  return endpoints
    .filter((endpoint) => endpointWants(endpoint, event))
    .map((endpoint) => ({
      id: deliveryId(event.eventId, endpoint.id),
      endpointId: endpoint.id,
      accountId: event.accountId,
      eventId: event.eventId,
      eventType: event.type,
      payload: event,
      createdAt: at,
      nextAttemptAt: at,
    }));
}

function isJobEvent(value: unknown): value is JobEvent {
  const v = value as Partial<JobEvent> | null;
  return !!v && typeof v.eventId === 'string' && typeof v.accountId === 'string' && (WEBHOOK_EVENT_TYPES as readonly string[]).includes(v.type as string);
}

/** Records the deliveries of one event; returns how many were new. */
export async function fanOut(store: Pick<WebhooksStore, 'listEndpoints' | 'enqueueDeliveries'>, event: JobEvent, now: Date): Promise<number> {
  const endpoints = await store.listEndpoints(event.accountId);
  return store.enqueueDeliveries(deliveriesFor(event, endpoints, now));
}

export async function startFanOut(deps: {
  bus: Pick<Bus, 'subscribe'>;
  store: Pick<WebhooksStore, 'listEndpoints' | 'enqueueDeliveries'>;
  clock: Clock;
  logger: Logger;
  onEnqueued(): void;
}): Promise<Subscription> {
  return deps.bus.subscribe<unknown>({
    topic: TOPICS.jobEvents,
    group: FANOUT_GROUP,
    concurrency: 4,
    handler: async (message) => {
      if (!isJobEvent(message.value)) {
        deps.logger.warn('ignoring a job event the webhook dispatcher does not know', { messageId: message.id });
        return;
      }
      if ((await fanOut(deps.store, message.value, new Date(deps.clock.now()))) > 0) deps.onEnqueued();
    },
  });
}
