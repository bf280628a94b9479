import { randomUUID } from 'node:crypto';
import type { Blobs } from '../../core/ports/blobs.ts';
import type { DownloadLinks } from '../../core/downloads.ts';
import type { AttemptRecord, WebhookDelivery, WebhookError, WebhooksStore } from '../../core/ports/webhooks.ts';
import { AUDIO_URL_TTL_SECONDS, buildWebhookBody, type AudioLink } from './body.ts';
import { checkDestination, DestinationError, type DestinationPolicy } from '../../core/net/destination.ts';
import type { Transport } from './http-post.ts';
import { MAX_ATTEMPTS, retryDelayMs, type Clock } from './schedule.ts';
import { liveSecrets, signatureHeader } from './signature.ts';

/**
 * One delivery attempt, from the endpoint check to the HTTP answer, and the
 * record it leaves. Everything that can change between attempts is looked
 * up again here: the endpoint (deleted or disabled mid-flight), the
 * destination (a name that now resolves to a private address), the audio
 * blob and the signing secrets.
 */
export interface AttemptDeps {
  store: Pick<WebhooksStore, 'getEndpoint'>;
  blobs: Pick<Blobs, 'exists'>;
  downloads: Pick<DownloadLinks, 'sign'>;
  transport: Transport;
  clock: Clock;
  policy: DestinationPolicy;
  totalTimeoutMs: number;
  connectTimeoutMs: number;
}

export interface AttemptOutcome {
  attempt: number;
  startedAt: Date;
  error: WebhookError | null;
  statusCode: number | null;
  durationMs: number;
  /** no later attempt could succeed (the endpoint is gone) */
  terminal: boolean;
  detail: string | null;
}

export const USER_AGENT = 'VieNeu-Webhooks/1.0';

export async function attemptDelivery(delivery: WebhookDelivery, deps: AttemptDeps): Promise<AttemptOutcome> {
  const attempt = delivery.attempts + 1;
  const startedAt = new Date(deps.clock.now());
  const started = performance.now();
  const outcome = (error: WebhookError | null, detail: string | null, extra: Partial<AttemptOutcome> = {}): AttemptOutcome => ({
    attempt, startedAt, error, statusCode: null, durationMs: Math.round(performance.now() - started), terminal: false, detail, ...extra,
  });

  const endpoint = await deps.store.getEndpoint(delivery.endpointId);
  if (!endpoint || endpoint.status !== 'ENABLED' || endpoint.accountId !== delivery.accountId) {
    return outcome('endpoint_unavailable', endpoint ? 'endpoint disabled' : 'endpoint deleted', { terminal: true });
  }

  let destination;
  try {
    destination = await checkDestination(endpoint.url, deps.policy);
  } catch (err) {
    if (!(err instanceof DestinationError)) throw err;
    return outcome(err.reason === 'dns_failure' ? 'dns_failure' : 'blocked_private_address', err.message);
  }

  let audio: AudioLink | null = null;
  if (delivery.payload.type === 'tts.job.completed') {
    if (!(await deps.blobs.exists(delivery.payload.audioKey))) return outcome('audio_not_uploaded', `blob ${delivery.payload.audioKey} not found`);
    const link = deps.downloads.sign(delivery.payload.audioKey, AUDIO_URL_TTL_SECONDS, { now: startedAt, job: delivery.payload.jobId });
    audio = { url: link.url, expiresAt: link.expiresAt };
  }

  const rawBody = Buffer.from(JSON.stringify(buildWebhookBody(delivery.payload, attempt, audio)));
  const timestamp = Math.floor(startedAt.getTime() / 1000);
  const result = await deps.transport({
    destination,
    body: rawBody,
    headers: {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'service-signature': signatureHeader(rawBody, liveSecrets(endpoint.secrets, startedAt), timestamp),
      'service-event-id': delivery.eventId,
      'service-event-type': delivery.eventType,
      'service-delivery': `whdl_${randomUUID().replaceAll('-', '')}`,
    },
    totalTimeoutMs: deps.totalTimeoutMs,
    connectTimeoutMs: deps.connectTimeoutMs,
  });
  return result.ok
    ? { attempt, startedAt, error: null, statusCode: result.statusCode, durationMs: result.durationMs, terminal: false, detail: null }
    : { attempt, startedAt, error: result.error, statusCode: result.statusCode, durationMs: result.durationMs, terminal: false, detail: result.detail };
}

/** What the store keeps after an attempt: delivered, rescheduled, or DEAD with an account notification. */
export function attemptRecord(delivery: WebhookDelivery, leaseToken: string, outcome: AttemptOutcome, retryScale: number): AttemptRecord {
  const base = {
    id: delivery.id,
    leaseToken,
    attempts: outcome.attempt,
    lastStatusCode: outcome.statusCode,
    lastError: outcome.error,
    lastDurationMs: outcome.durationMs,
    lastAttemptAt: outcome.startedAt.toISOString(),
  };
  if (outcome.error === null) {
    return { ...base, status: 'DELIVERED', nextAttemptAt: null, deliveredAt: outcome.startedAt.toISOString() };
  }
  const payload = delivery.payload;
  // A test event is attempted once, and its failure is shown on the endpoint's deliveries, not notified.
  if (payload.type === 'webhook.test') return { ...base, status: 'DEAD', nextAttemptAt: null, deliveredAt: null };
  const delay = outcome.terminal ? null : retryDelayMs(outcome.attempt, retryScale);
  if (delay !== null) {
    return { ...base, status: 'PENDING', nextAttemptAt: new Date(outcome.startedAt.getTime() + delay).toISOString(), deliveredAt: null };
  }
  const why = outcome.terminal ? 'its endpoint was deleted or disabled' : `all ${MAX_ATTEMPTS} attempts failed`;
  return {
    ...base,
    status: 'DEAD',
    nextAttemptAt: null,
    deliveredAt: null,
    notification: {
      id: `ntf_${delivery.id}`,
      accountId: delivery.accountId,
      kind: 'webhook.delivery.dead',
      message: `Webhook event ${delivery.eventId} (${delivery.eventType}) was not delivered: ${why} (last error ${outcome.error}). The job stays retrievable with GET /tts/${payload.jobId}.`,
      subject: { endpointId: delivery.endpointId, deliveryId: delivery.id, eventId: delivery.eventId, jobId: payload.jobId },
      createdAt: outcome.startedAt.toISOString(),
    },
  };
}
