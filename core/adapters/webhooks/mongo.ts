import { rotatedSecrets } from './secrets.ts';
import type { Db } from 'mongodb';
import type {
  AccountNotification,
  ClaimedDelivery,
  WebhookDelivery,
  WebhookEndpoint,
  WebhooksStore,
} from '../../ports/webhooks.ts';
import { CLAIM_PASSES, claimRoom, claimScanSize } from '../../ports/webhooks.ts';

/**
 * Production webhooks adapter on MongoDB. Records keep the port's field names
 * with `id` stored as `_id`; deliveries also carry `nextAttemptMs`,
 * `leaseUntilMs` and `leaseToken` for the claim. A claim leases each
 * delivery with one conditional update, so two dispatchers can never both
 * win the same one.
 */

type EndpointDoc = Omit<WebhookEndpoint, 'id'> & { _id: string };
type DeliveryDoc = Omit<WebhookDelivery, 'id'> & {
  _id: string;
  nextAttemptMs: number | null;
  leaseUntilMs: number;
  leaseToken: string | null;
};
type NotificationDoc = Omit<AccountNotification, 'id'> & { _id: string };

function toEndpoint(doc: EndpointDoc | null): WebhookEndpoint | null {
  if (!doc) return null;
  const { _id, ...rest } = doc;
  return { ...rest, id: _id };
}

function toDelivery(doc: DeliveryDoc | null): WebhookDelivery | null {
  if (!doc) return null;
  const { _id, nextAttemptMs: _n, leaseUntilMs: _l, leaseToken: _t, ...rest } = doc;
  return { ...rest, id: _id };
}

export async function createMongoWebhooks(db: Db): Promise<WebhooksStore> {
  const endpoints = db.collection<EndpointDoc>('webhook_endpoints');
  const deliveries = db.collection<DeliveryDoc>('webhook_deliveries');
  const notifications = db.collection<NotificationDoc>('webhook_notifications');
  await endpoints.createIndex({ accountId: 1, createdAt: 1 });
  await deliveries.createIndexes([
    { key: { eventId: 1, endpointId: 1 }, unique: true },
    { key: { nextAttemptMs: 1 }, partialFilterExpression: { status: 'PENDING' } },
    { key: { endpointId: 1, createdAt: -1 } },
  ]);
  await notifications.createIndex({ accountId: 1, createdAt: -1 });

  return {
    async createEndpoint(endpoint) {
      const { id, ...rest } = endpoint;
      await endpoints.insertOne({ ...rest, _id: id });
      return structuredClone(endpoint);
    },
    async getEndpoint(id) {
      return toEndpoint(await endpoints.findOne({ _id: id }));
    },
    async listEndpoints(accountId) {
      const docs = await endpoints.find({ accountId }).sort({ createdAt: 1, _id: 1 }).toArray();
      return docs.map((d) => toEndpoint(d)!);
    },
    async deleteEndpoint(id) {
      return (await endpoints.deleteOne({ _id: id })).deletedCount === 1;
    },
    async setEndpointStatus(id, status) {
      return (await endpoints.updateOne({ _id: id }, { $set: { status } })).matchedCount === 1;
    },
    async rotateSecret(id, secret, previousExpiresAt, now) {
      // Optimistic: retried when a concurrent rotation changed the secrets under us.
      for (;;) {
        const current = await endpoints.findOne({ _id: id });
        if (!current) return null;
        const secrets = rotatedSecrets(current.secrets, secret, previousExpiresAt, now);
        const secretPrefix = secret.secret.slice(0, 10);
        const res = await endpoints.updateOne({ _id: id, secrets: current.secrets }, { $set: { secrets, secretPrefix } });
        if (res.matchedCount === 1) return toEndpoint({ ...current, secrets, secretPrefix });
      }
    },
    async enqueueDeliveries(list) {
      if (list.length === 0) return 0;
      const ops = list.map((d) => {
        const { id, ...rest } = d;
        const doc: DeliveryDoc = {
          ...rest, _id: id, status: 'PENDING', attempts: 0, nextAttemptMs: Date.parse(d.nextAttemptAt), leaseUntilMs: 0, leaseToken: null,
          lastStatusCode: null, lastError: null, lastDurationMs: null, lastAttemptAt: null, deliveredAt: null,
        };
        const { eventId, endpointId, ...insertOnly } = doc;
        return { updateOne: { filter: { eventId, endpointId }, update: { $setOnInsert: insertOnly }, upsert: true } };
      });
      try {
        const res = await deliveries.bulkWrite(ops, { ordered: false });
        return res.upsertedCount;
      } catch (err) {
        // Two consumers upserting the same (eventId, endpointId) at once: the loser hits the unique index; the record exists.
        const e = err as { code?: number; result?: { upsertedCount?: number }; writeErrors?: { code: number } | Array<{ code: number }> };
        const writeErrors = e.writeErrors === undefined ? [] : ([] as Array<{ code: number }>).concat(e.writeErrors);
        const duplicatesOnly = e.code === 11000 || (writeErrors.length > 0 && writeErrors.every((w) => w.code === 11000));
        if (!duplicatesOnly) throw err;
        return e.result?.upsertedCount ?? 0;
      }
    },
    async getDelivery(id) {
      return toDelivery(await deliveries.findOne({ _id: id }));
    },
    async listDeliveries(endpointId, limit) {
      const docs = await deliveries.find({ endpointId }).sort({ createdAt: -1, _id: -1 }).limit(limit).toArray();
      return docs.map((d) => toDelivery(d)!);
    },
    async claimDue(request) {
      if (request.limit <= 0) return [];
      const now = request.now.getTime();
      const due = { status: 'PENDING' as const, nextAttemptMs: { $lte: now }, leaseUntilMs: { $lte: now } };
      // Candidates another dispatcher leased first are passed over, so the room they leave goes to the next ones.
      const claimed: ClaimedDelivery[] = [];
      const room = claimRoom(request);
      for (let pass = 0; pass < CLAIM_PASSES && !room.full(); pass++) {
        const candidates = await deliveries
          .find(
            { ...due, endpointId: { $nin: room.saturatedEndpoints() }, accountId: { $nin: room.saturatedAccounts() } },
            { projection: { _id: 1, endpointId: 1, accountId: 1 } },
          )
          .sort({ nextAttemptMs: 1, _id: 1 })
          .limit(claimScanSize(request.limit))
          .toArray();
        const before = claimed.length;
        for (const candidate of candidates) {
          if (room.full()) break;
          if (!room.fits(candidate)) continue;
          const doc = await deliveries.findOneAndUpdate(
            { _id: candidate._id, ...due },
            { $set: { leaseUntilMs: request.leaseUntil.getTime(), leaseToken: request.leaseToken } },
            { returnDocument: 'after' },
          );
          if (!doc) continue;
          room.take(candidate);
          claimed.push({ delivery: toDelivery(doc)!, leaseToken: request.leaseToken });
        }
        if (claimed.length === before || candidates.length < claimScanSize(request.limit)) break;
      }
      return claimed;
    },
    async recordAttempt(r) {
      const { id, leaseToken, notification, ...fields } = r;
      const nextAttemptMs = fields.nextAttemptAt === null ? null : Date.parse(fields.nextAttemptAt);
      const held = { _id: id, leaseToken, status: 'PENDING' as const };
      if (notification) {
        // Written before the DEAD record (no multi-document transaction needed): a crash in between leaves the
        // delivery leased, the attempt is repeated after the lease and the upsert on the derived id keeps one notification.
        if (!(await deliveries.findOne(held, { projection: { _id: 1 } }))) return false;
        const { id: notificationId, ...rest } = notification;
        await notifications.updateOne({ _id: notificationId }, { $setOnInsert: rest }, { upsert: true });
      }
      const res = await deliveries.updateOne(held, { $set: { ...fields, nextAttemptMs, leaseUntilMs: 0, leaseToken: null } });
      return res.matchedCount === 1;
    },
    async listNotifications(accountId, limit) {
      const docs = await notifications.find({ accountId }).sort({ createdAt: -1, _id: -1 }).limit(limit).toArray();
      return docs.map(({ _id, ...rest }) => ({ ...rest, id: _id }));
    },
  };
}
