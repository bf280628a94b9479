import Router from '@koa/router';
import { koaBody } from 'koa-body';
import { refusingBodyReadErrors, requireJsonBody } from '../../core/http/body-read.ts';
import { timingSafeEqual } from 'node:crypto';
import type { Documents } from '../../core/ports/documents.ts';
import type { BillingService } from '../../core/billing/service.ts';
import type { KeyAuthenticator } from '../../core/http/auth.ts';
import type { IdentityService } from '../../core/identity/service.ts';
import { ApiError } from '../../core/errors.ts';
import { validate } from '../../core/http/validate.ts';
import { createAdminService } from './service.ts';
import { accountBody, bootstrapBody, cloneBody, grantBody, grantStatusBody, keyBody, userBody } from './schemas.ts';

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Admin HTTP API under /admin/v1, guarded by the ADMIN_TOKEN bearer token.
 * Disabled (403) when no ADMIN_TOKEN is configured.
 */
export interface AdminDeps {
  documents: Documents;
  billing: BillingService;
  keys: KeyAuthenticator;
  identity: IdentityService;
  /** ADMIN_TOKEN; null disables the API */
  token: string | null;
}

export function adminRouter(services: AdminDeps): Router {
  const admin = createAdminService({ documents: services.documents, billing: services.billing });
  const router = new Router({ prefix: '/admin/v1' });

  router.use(async (ctx, next) => {
    const token = services.token;
    if (!token) throw new ApiError(403, 'The admin API is disabled: set ADMIN_TOKEN to enable it.', { code: 'ADMIN_DISABLED' });
    const match = /^Bearer\s+(.+)$/i.exec(ctx.get('authorization'));
    if (!match || !sameSecret(match[1].trim(), token)) throw new ApiError(401, 'Admin token missing or wrong.');
    await next();
  });
  router.use(async (ctx, next) => {
    requireJsonBody(ctx);
    await next();
  });
  router.use(refusingBodyReadErrors(koaBody({ json: true, urlencoded: false, text: false, jsonStrict: true })));

  router.post('/bootstrap', async (ctx) => {
    ctx.status = 201;
    ctx.body = await admin.bootstrap(validate(bootstrapBody, ctx.request.body));
  });
  router.post('/accounts', async (ctx) => {
    ctx.status = 201;
    ctx.body = await admin.createAccount(validate(accountBody, ctx.request.body));
  });
  router.get('/accounts/:accountId', async (ctx) => {
    ctx.body = await admin.getAccount(ctx.params.accountId);
  });
  router.post('/accounts/:accountId/grants', async (ctx) => {
    ctx.status = 201;
    ctx.body = await admin.createGrant(ctx.params.accountId, validate(grantBody, ctx.request.body));
  });
  router.post('/accounts/:accountId/trial', async (ctx) => {
    ctx.status = 201;
    ctx.body = await admin.startTrial(ctx.params.accountId);
  });
  router.patch('/grants/:grantId', async (ctx) => {
    const { status } = validate(grantStatusBody, ctx.request.body);
    ctx.body = await admin.setGrantStatus(ctx.params.grantId, status);
  });
  router.get('/grants/:grantId/reconcile', async (ctx) => {
    ctx.body = await admin.reconcile(ctx.params.grantId);
  });
  router.post('/accounts/:accountId/keys', async (ctx) => {
    ctx.status = 201;
    ctx.body = await admin.createKey(ctx.params.accountId, validate(keyBody, ctx.request.body));
  });
  router.get('/accounts/:accountId/keys', async (ctx) => {
    ctx.body = { keys: await admin.listKeys(ctx.params.accountId) };
  });
  router.delete('/keys/:keyId', async (ctx) => {
    ctx.body = await admin.revokeKey(ctx.params.keyId);
    services.keys.forget(ctx.params.keyId);
  });
  router.get('/accounts/:accountId/balance', async (ctx) => {
    ctx.body = await admin.balance(ctx.params.accountId);
  });
  router.post('/accounts/:accountId/users', async (ctx) => {
    const body = validate(userBody, ctx.request.body) as { email: string; password?: string | null; name?: string | null };
    ctx.status = 201;
    ctx.body = await services.identity.createUser({ accountId: ctx.params.accountId, ...body });
  });
  router.get('/accounts/:accountId/users', async (ctx) => {
    await admin.getAccount(ctx.params.accountId);
    ctx.body = { users: await services.identity.listUsers(ctx.params.accountId) };
  });
  router.post('/accounts/:accountId/clones', async (ctx) => {
    ctx.status = 201;
    ctx.body = await admin.createClone(ctx.params.accountId, validate(cloneBody, ctx.request.body));
  });
  return router;
}
