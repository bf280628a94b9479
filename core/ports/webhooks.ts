import type { JobEvent } from './job-events.ts';

/**
 * Webhooks port: endpoints, their delivery records and the account
 * notifications a dead delivery leaves behind (SPEC: Webhook endpoint,
 * Webhook delivery record, Delivery semantics). The retry schedule lives in
 * the delivery records themselves (`nextAttemptAt`), so a restarted
 * dispatcher loses no scheduled attempt.
 * Adapters: core/adapters/webhooks/sqlite.ts and core/adapters/webhooks/mongo.ts.
 */

export const WEBHOOK_EVENT_TYPES = ['tts.job.completed', 'tts.job.failed'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * Not a job event: a signed event sent on request to check an endpoint
 * (`POST /webhooks/{id}/test`, the console's Test button). Attempted once;
 * never on an endpoint's `events` list.
 */
export const WEBHOOK_TEST_EVENT = 'webhook.test' as const;

export interface WebhookTestEvent {
  type: typeof WEBHOOK_TEST_EVENT;
  /** `evt_t_...`, new for every test */
  eventId: string;
  accountId: string;
  endpointId: string;
  at: string;
}

/** What a delivery carries: a job event, or a test event. */
export type DeliveryEvent = JobEvent | WebhookTestEvent;
export type DeliveryEventType = DeliveryEvent['type'];

/**
 * SPEC shows only `ENABLED`; `DISABLED` pauses an endpoint (`POST
 * /webhooks/{id}/disable`): no new deliveries are recorded for it, and an
 * attempt due while it is disabled fails `endpoint_unavailable`, as SPEC
 * says of an endpoint disabled mid-flight.
 */
export type WebhookEndpointStatus = 'ENABLED' | 'DISABLED';

export interface WebhookSecret {
  /** `whsec_...`; kept in clear because every delivery is signed with it */
  secret: string;
  createdAt: string;
  /** null while it is the current secret; set to rotation time + 24 h when replaced */
  expiresAt: string | null;
}

export interface WebhookEndpoint {
  /** `we_...` */
  id: string;
  accountId: string;
  url: string;
  description: string | null;
  /** only jobs submitted with this key; null = every key of the account */
  apiKeyId: string | null;
  events: WebhookEventType[];
  status: WebhookEndpointStatus;
  /** newest first */
  secrets: WebhookSecret[];
  /** first characters of the current secret, shown in listings */
  secretPrefix: string;
  createdAt: string;
}

/** SPEC's `lastError` vocabulary, exactly. */
export const WEBHOOK_ERRORS = [
  'http_4xx',
  'http_5xx',
  'redirect_refused',
  'connect_timeout',
  'response_timeout',
  'connection_refused',
  'dns_failure',
  'tls_failure',
  'blocked_private_address',
  'endpoint_unavailable',
  'audio_not_uploaded',
] as const;
export type WebhookError = (typeof WEBHOOK_ERRORS)[number];

export type DeliveryStatus = 'PENDING' | 'DELIVERED' | 'DEAD';

export interface WebhookDelivery {
  /** `wd_...` */
  id: string;
  endpointId: string;
  accountId: string;
  /** the event's `evt_...` id; one delivery per (eventId, endpointId) */
  eventId: string;
  eventType: DeliveryEventType;
  /** the event the body is built from at each attempt */
  payload: DeliveryEvent;
  status: DeliveryStatus;
  /** attempts made so far */
  attempts: number;
  /** when the next attempt is due; null once DELIVERED or DEAD */
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: WebhookError | null;
  lastDurationMs: number | null;
  lastAttemptAt: string | null;
  deliveredAt: string | null;
  createdAt: string;
}

export type NewDelivery = Pick<WebhookDelivery, 'id' | 'endpointId' | 'accountId' | 'eventId' | 'eventType' | 'payload' | 'createdAt'> & {
  nextAttemptAt: string;
};

/** A delivery handed to one dispatcher until `leaseUntil`; the token proves the lease when the attempt is recorded. */
export interface ClaimedDelivery {
  delivery: WebhookDelivery;
  leaseToken: string;
}

export interface ClaimRequest {
  now: Date;
  /** the lease ends here; an unrecorded attempt becomes claimable again after it (a crashed dispatcher loses nothing) */
  leaseUntil: Date;
  leaseToken: string;
  /** most deliveries to hand out */
  limit: number;
  /** bounded concurrency per endpoint: at most this many of one endpoint's deliveries in flight in this dispatcher */
  maxPerEndpoint: number;
  /** deliveries this dispatcher already has in flight, by endpoint id */
  inFlight: ReadonlyMap<string, number>;
  /**
   * bounded concurrency per account: one account's many slow endpoints
   * (each within maxPerEndpoint) must not hold every slot while other
   * accounts' deliveries wait
   */
  maxPerAccount: number;
  /** deliveries this dispatcher already has in flight, by account id */
  inFlightByAccount: ReadonlyMap<string, number>;
}

export interface AttemptRecord {
  id: string;
  leaseToken: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: WebhookError | null;
  lastDurationMs: number;
  lastAttemptAt: string;
  deliveredAt: string | null;
  /** written with a DEAD record, once */
  notification?: AccountNotification;
}

export interface AccountNotification {
  /** `ntf_...`; derived from the delivery id so a repeated write is harmless */
  id: string;
  accountId: string;
  kind: 'webhook.delivery.dead';
  message: string;
  /** ids the notification refers to (endpointId, deliveryId, eventId) */
  subject: Record<string, string>;
  createdAt: string;
}

export interface WebhooksStore {
  createEndpoint(endpoint: WebhookEndpoint): Promise<WebhookEndpoint>;
  getEndpoint(id: string): Promise<WebhookEndpoint | null>;
  /** oldest first */
  listEndpoints(accountId: string): Promise<WebhookEndpoint[]>;
  /** false when it did not exist */
  deleteEndpoint(id: string): Promise<boolean>;
  setEndpointStatus(id: string, status: WebhookEndpointStatus): Promise<boolean>;
  /**
   * Makes `secret` current; the secret that was current stays live until
   * `previousExpiresAt`, and every older one is dropped (at most two live
   * secrets: core/adapters/webhooks/secrets.ts). Null when the endpoint is gone.
   */
  rotateSecret(id: string, secret: WebhookSecret, previousExpiresAt: string, now: string): Promise<WebhookEndpoint | null>;

  /** inserts the deliveries not yet recorded for their (eventId, endpointId); returns how many were new */
  enqueueDeliveries(deliveries: NewDelivery[]): Promise<number>;
  getDelivery(id: string): Promise<WebhookDelivery | null>;
  /** newest first */
  listDeliveries(endpointId: string, limit: number): Promise<WebhookDelivery[]>;
  /** atomically leases PENDING deliveries that are due and not leased by anyone else, earliest due first */
  claimDue(request: ClaimRequest): Promise<ClaimedDelivery[]>;
  /** records one attempt; false (and nothing written) when the lease was lost to another dispatcher */
  recordAttempt(record: AttemptRecord): Promise<boolean>;

  /** newest first */
  listNotifications(accountId: string, limit: number): Promise<AccountNotification[]>;
}

type Candidate = { endpointId: string; accountId: string };

/**
 * The room a claim has, counted as candidates are taken: the overall limit,
 * and what is left per endpoint and per account. Shared by the adapters so
 * both hand out the same set. An adapter scans due deliveries leaving out
 * the endpoints and accounts that are full, takes what fits, and scans
 * again while there is room and the last pass took something: a pass whose
 * candidates were mostly one account's (it filled up on the way) is
 * followed by one that leaves that account out, so the deliveries of
 * others behind its backlog are reached.
 */
export function claimRoom(request: Pick<ClaimRequest, 'limit' | 'maxPerEndpoint' | 'inFlight' | 'maxPerAccount' | 'inFlightByAccount'>) {
  const byEndpoint = new Map(request.inFlight);
  const byAccount = new Map(request.inFlightByAccount);
  const full = (counts: Map<string, number>, max: number) => [...counts].filter(([, n]) => n >= max).map(([id]) => id);
  let taken = 0;
  return {
    full: () => taken >= request.limit,
    fits: (c: Candidate) => (byEndpoint.get(c.endpointId) ?? 0) < request.maxPerEndpoint && (byAccount.get(c.accountId) ?? 0) < request.maxPerAccount,
    take(c: Candidate) {
      taken++;
      byEndpoint.set(c.endpointId, (byEndpoint.get(c.endpointId) ?? 0) + 1);
      byAccount.set(c.accountId, (byAccount.get(c.accountId) ?? 0) + 1);
    },
    /** endpoints with no room left, to leave out of the next scan */
    saturatedEndpoints: () => full(byEndpoint, request.maxPerEndpoint),
    saturatedAccounts: () => full(byAccount, request.maxPerAccount),
  };
}

/** Most scans of one claim (see claimRoom). */
export const CLAIM_PASSES = 4;

/** How many candidates an adapter reads per claim: enough to skip past a few busy endpoints without reading the whole backlog. */
export function claimScanSize(limit: number): number {
  return Math.min(2000, limit * 8 + 32);
}
