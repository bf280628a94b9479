import { rotatedSecrets } from './secrets.ts';
import type { EmbeddedDb } from '../embedded-db.ts';
import type {
  AccountNotification,
  ClaimedDelivery,
  WebhookDelivery,
  WebhookEndpoint,
  WebhooksStore,
} from '../../ports/webhooks.ts';
import { CLAIM_PASSES, claimRoom, claimScanSize } from '../../ports/webhooks.ts';

/**
 * Embedded webhooks adapter on the shared SQLite file. Claims run in an
 * IMMEDIATE transaction so two dispatchers on the same file never lease the
 * same delivery; times that are compared (due, lease) are kept as epoch
 * milliseconds beside the ISO strings the port shows.
 */
const DDL = `
CREATE TABLE IF NOT EXISTS webhook_endpoints (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  url TEXT NOT NULL,
  description TEXT,
  api_key_id TEXT,
  events TEXT NOT NULL,
  status TEXT NOT NULL,
  secrets TEXT NOT NULL,
  secret_prefix TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS webhook_endpoints_by_account ON webhook_endpoints (account_id, created_at);
CREATE TABLE IF NOT EXISTS webhook_deliveries (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  endpoint_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  payload TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT,
  next_attempt_ms INTEGER,
  lease_until_ms INTEGER NOT NULL DEFAULT 0,
  lease_token TEXT,
  last_status_code INTEGER,
  last_error TEXT,
  last_duration_ms INTEGER,
  last_attempt_at TEXT,
  delivered_at TEXT,
  created_at TEXT NOT NULL,
  UNIQUE (event_id, endpoint_id)
);
-- Covering, so a claim that skips leased rows and busy endpoints or accounts never reads the table rows it skips
-- (the index of older versions, without account_id, is replaced).
DROP INDEX IF EXISTS webhook_deliveries_due;
CREATE INDEX IF NOT EXISTS webhook_deliveries_due_v2 ON webhook_deliveries (next_attempt_ms, seq, endpoint_id, account_id, lease_until_ms, id) WHERE status = 'PENDING';
CREATE INDEX IF NOT EXISTS webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, seq);
CREATE TABLE IF NOT EXISTS webhook_notifications (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  message TEXT NOT NULL,
  subject TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS webhook_notifications_by_account ON webhook_notifications (account_id, created_at);
`;

const ENDPOINT_COLUMNS = `id, account_id AS accountId, url, description, api_key_id AS apiKeyId, events, status,
  secrets, secret_prefix AS secretPrefix, created_at AS createdAt`;
const DELIVERY_COLUMNS = `id, endpoint_id AS endpointId, account_id AS accountId, event_id AS eventId, event_type AS eventType,
  payload, status, attempts, next_attempt_at AS nextAttemptAt, last_status_code AS lastStatusCode, last_error AS lastError,
  last_duration_ms AS lastDurationMs, last_attempt_at AS lastAttemptAt, delivered_at AS deliveredAt, created_at AS createdAt`;

type EndpointRow = Omit<WebhookEndpoint, 'events' | 'secrets'> & { events: string; secrets: string };
type DeliveryRow = Omit<WebhookDelivery, 'payload'> & { payload: string };
type NotificationRow = Omit<AccountNotification, 'subject'> & { subject: string };

const toEndpoint = (row: EndpointRow): WebhookEndpoint => ({ ...row, events: JSON.parse(row.events), secrets: JSON.parse(row.secrets) });
const toDelivery = (row: DeliveryRow): WebhookDelivery => ({ ...row, payload: JSON.parse(row.payload) });
const toNotification = (row: NotificationRow): AccountNotification => ({ ...row, subject: JSON.parse(row.subject) });
const epochMs = (iso: string | null) => (iso === null ? null : Date.parse(iso));

export function createSqliteWebhooks(db: EmbeddedDb): WebhooksStore {
  db.exec(DDL);
  const s = {
    insertEndpoint: db.prepare(`INSERT INTO webhook_endpoints (id, account_id, url, description, api_key_id, events, status, secrets, secret_prefix, created_at)
      VALUES (@id, @accountId, @url, @description, @apiKeyId, @events, @status, @secrets, @secretPrefix, @createdAt)`),
    endpointById: db.prepare(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = ?`),
    endpointsByAccount: db.prepare(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE account_id = ? ORDER BY created_at, rowid`),
    deleteEndpoint: db.prepare('DELETE FROM webhook_endpoints WHERE id = ?'),
    setStatus: db.prepare('UPDATE webhook_endpoints SET status = ? WHERE id = ?'),
    setSecrets: db.prepare('UPDATE webhook_endpoints SET secrets = ?, secret_prefix = ? WHERE id = ?'),
    insertDelivery: db.prepare(`INSERT OR IGNORE INTO webhook_deliveries
      (id, endpoint_id, account_id, event_id, event_type, payload, status, attempts, next_attempt_at, next_attempt_ms, created_at)
      VALUES (@id, @endpointId, @accountId, @eventId, @eventType, @payload, 'PENDING', 0, @nextAttemptAt, @nextAttemptMs, @createdAt)`),
    deliveryById: db.prepare(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE id = ?`),
    deliveriesByEndpoint: db.prepare(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY seq DESC LIMIT ?`),
    dueCandidates: db.prepare(`SELECT id, endpoint_id AS endpointId, account_id AS accountId FROM webhook_deliveries
      WHERE status = 'PENDING' AND next_attempt_ms <= @now AND lease_until_ms <= @now
        AND endpoint_id NOT IN (SELECT value FROM json_each(@saturated))
        AND account_id NOT IN (SELECT value FROM json_each(@saturatedAccounts))
      ORDER BY next_attempt_ms, seq LIMIT @scan`),
    lease: db.prepare(`UPDATE webhook_deliveries SET lease_until_ms = @until, lease_token = @token
      WHERE id = @id AND status = 'PENDING' AND lease_until_ms <= @now`),
    record: db.prepare(`UPDATE webhook_deliveries SET status = @status, attempts = @attempts,
        next_attempt_at = @nextAttemptAt, next_attempt_ms = @nextAttemptMs, lease_until_ms = 0, lease_token = NULL,
        last_status_code = @lastStatusCode, last_error = @lastError, last_duration_ms = @lastDurationMs,
        last_attempt_at = @lastAttemptAt, delivered_at = @deliveredAt
      WHERE id = @id AND lease_token = @leaseToken AND status = 'PENDING'`),
    insertNotification: db.prepare(`INSERT OR IGNORE INTO webhook_notifications (id, account_id, kind, message, subject, created_at)
      VALUES (@id, @accountId, @kind, @message, @subject, @createdAt)`),
    notificationsByAccount: db.prepare(`SELECT id, account_id AS accountId, kind, message, subject, created_at AS createdAt
      FROM webhook_notifications WHERE account_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?`),
  };

  const getEndpoint = (id: string) => {
    const row = s.endpointById.get(id) as EndpointRow | undefined;
    return row ? toEndpoint(row) : null;
  };

  const rotate = db.transaction((id: string, secret: WebhookEndpoint['secrets'][number], previousExpiresAt: string, now: string) => {
    const endpoint = getEndpoint(id);
    if (!endpoint) return null;
    const secrets = rotatedSecrets(endpoint.secrets, secret, previousExpiresAt, now);
    const secretPrefix = secret.secret.slice(0, 10);
    s.setSecrets.run(JSON.stringify(secrets), secretPrefix, id);
    return { ...endpoint, secrets, secretPrefix };
  });

  const enqueue = db.transaction((rows: Parameters<WebhooksStore['enqueueDeliveries']>[0]) => {
    let created = 0;
    for (const d of rows) {
      created += s.insertDelivery.run({ ...d, payload: JSON.stringify(d.payload), nextAttemptMs: epochMs(d.nextAttemptAt) }).changes;
    }
    return created;
  });

  const claim = db.transaction((request: Parameters<WebhooksStore['claimDue']>[0]): ClaimedDelivery[] => {
    const now = request.now.getTime();
    const room = claimRoom(request);
    const claimed: ClaimedDelivery[] = [];
    for (let pass = 0; pass < CLAIM_PASSES && !room.full(); pass++) {
      const candidates = s.dueCandidates.all({
        now,
        saturated: JSON.stringify(room.saturatedEndpoints()),
        saturatedAccounts: JSON.stringify(room.saturatedAccounts()),
        scan: claimScanSize(request.limit),
      }) as Array<{ id: string; endpointId: string; accountId: string }>;
      const before = claimed.length;
      for (const candidate of candidates) {
        if (room.full()) break;
        if (!room.fits(candidate)) continue;
        // Leased here, so the next pass's scan no longer sees it.
        const leased = s.lease.run({ id: candidate.id, now, until: request.leaseUntil.getTime(), token: request.leaseToken }).changes === 1;
        if (!leased) continue;
        room.take(candidate);
        claimed.push({ delivery: toDelivery(s.deliveryById.get(candidate.id) as DeliveryRow), leaseToken: request.leaseToken });
      }
      if (claimed.length === before || candidates.length < claimScanSize(request.limit)) break;
    }
    return claimed;
  });

  const record = db.transaction((r: Parameters<WebhooksStore['recordAttempt']>[0]) => {
    const { notification, ...fields } = r;
    const written = s.record.run({ ...fields, nextAttemptMs: epochMs(fields.nextAttemptAt) }).changes === 1;
    if (written && notification) s.insertNotification.run({ ...notification, subject: JSON.stringify(notification.subject) });
    return written;
  });

  return {
    async createEndpoint(endpoint) {
      s.insertEndpoint.run({ ...endpoint, events: JSON.stringify(endpoint.events), secrets: JSON.stringify(endpoint.secrets) });
      return structuredClone(endpoint);
    },
    async getEndpoint(id) {
      return getEndpoint(id);
    },
    async listEndpoints(accountId) {
      return (s.endpointsByAccount.all(accountId) as EndpointRow[]).map(toEndpoint);
    },
    async deleteEndpoint(id) {
      return s.deleteEndpoint.run(id).changes === 1;
    },
    async setEndpointStatus(id, status) {
      return s.setStatus.run(status, id).changes === 1;
    },
    async rotateSecret(id, secret, previousExpiresAt, now) {
      return rotate.immediate(id, secret, previousExpiresAt, now);
    },
    async enqueueDeliveries(deliveries) {
      return deliveries.length === 0 ? 0 : enqueue.immediate(deliveries);
    },
    async getDelivery(id) {
      const row = s.deliveryById.get(id) as DeliveryRow | undefined;
      return row ? toDelivery(row) : null;
    },
    async listDeliveries(endpointId, limit) {
      return (s.deliveriesByEndpoint.all(endpointId, limit) as DeliveryRow[]).map(toDelivery);
    },
    async claimDue(request) {
      return request.limit <= 0 ? [] : claim.immediate(request);
    },
    async recordAttempt(r) {
      return record.immediate(r);
    },
    async listNotifications(accountId, limit) {
      return (s.notificationsByAccount.all(accountId, limit) as NotificationRow[]).map(toNotification);
    },
  };
}
