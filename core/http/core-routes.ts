import Router from '@koa/router';
import type { CoreServices } from '../plugin.ts';
import { ApiError } from '../errors.ts';

const READY_TIMEOUT_MS = 2000;

async function check(name: string, ping: () => Promise<void>): Promise<[string, string]> {
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timed out')), READY_TIMEOUT_MS).unref());
  try {
    await Promise.race([ping(), timeout]);
    return [name, 'ok'];
  } catch (err) {
    return [name, `unreachable: ${(err as Error).message}`];
  }
}

/** Routes core serves for every deployment: probes, metrics and signed downloads. */
export function coreRoutes(services: CoreServices): Router {
  const router = new Router();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    const results = await Promise.all([
      check('documents', () => services.documents.ping()),
      check('bus', () => services.bus.ping()),
      check('counters', () => services.counters.ping()),
      check('blobs', () => services.blobs.ping()),
      check('analytics', () => services.analytics.ping()),
      check('engine', () => services.engine.ping()),
    ]);
    const adapters = Object.fromEntries(results);
    const ready = results.every(([, s]) => s === 'ok');
    ctx.status = ready ? 200 : 503;
    ctx.body = { status: ready ? 'ready' : 'not_ready', adapters };
  });
  router.get('/metrics', async (ctx) => {
    ctx.type = services.metrics.registry.contentType;
    ctx.body = await services.metrics.registry.metrics();
  });
  router.get('/files/*key', async (ctx) => {
    const raw = ctx.params.key as unknown;
    const key = Array.isArray(raw) ? raw.join('/') : String(raw);
    const { expires, signature } = ctx.query;
    if (typeof expires !== 'string' || typeof signature !== 'string' || !services.downloads.verify(key, expires, signature)) {
      throw new ApiError(403, 'This download link is invalid or has expired. Request a fresh link.', { code: 'LINK_EXPIRED' });
    }
    const blob = await services.blobs.open(key);
    if (!blob) throw new ApiError(404, 'The file behind this link no longer exists.', { code: 'FILE_NOT_FOUND' });
    ctx.type = blob.info.contentType;
    ctx.length = blob.info.size;
    ctx.set('Cache-Control', 'private, max-age=3600');
    ctx.body = blob.stream;
  });
  return router;
}
