import type Router from '@koa/router';
import Joi from 'joi';
import type { IdentityService } from '../../core/identity/service.ts';
import type { Documents, Grant } from '../../core/ports/documents.ts';
import type { KeyAuthenticator } from '../../core/http/auth.ts';
import { MAX_ACTIVE_KEYS, type AccountKeys } from '../../core/account-keys.ts';
import { planView } from '../../core/billing/service.ts';
import { capWindows } from '../../core/billing/windows.ts';
import { isExpired } from '../../core/billing/assessment.ts';
import { validate } from '../../core/http/validate.ts';
import { jsonBody, requireCsrfHeader, signedInVisitor } from './session-routes.ts';

/**
 * What SPEC leaves to "a signed-in user in the web application": creating,
 * listing and revoking the account's keys, starting the one-time trial, and
 * every grant with its caps (the public `GET /balance` shows one plan). The
 * rules are core's (core/account-keys.ts), the same as the admin API's.
 */

export interface AccountRouteDeps {
  identity: IdentityService;
  documents: Documents;
  accountKeys: AccountKeys;
  keys: KeyAuthenticator;
  timezoneOffsetMinutes: number;
}

interface NewKeyBody {
  kind: 'live' | 'test';
  grantId?: string | null;
  name?: string | null;
}

const newKeyBody = Joi.object<NewKeyBody>({
  kind: Joi.string().valid('live', 'test').default('live'),
  grantId: Joi.string().trim().max(100).allow(null, ''),
  name: Joi.string().trim().max(80).allow(null, ''),
});

/** A grant as the console lists it: the plan view of `GET /balance`, plus what tells grants apart. */
export function grantEntry(g: Grant, now: Date, timezoneOffsetMinutes: number) {
  return {
    ...planView(g, capWindows(now, timezoneOffsetMinutes)),
    status: g.status,
    expired: isExpired(g, now),
    engines: g.engines,
    createdAt: g.createdAt,
  };
}

export function accountRoutes(router: Router, deps: AccountRouteDeps): void {
  const { identity, documents, accountKeys } = deps;

  router.get('/console/api/keys', async (ctx) => {
    const { signedIn } = await signedInVisitor(ctx, identity);
    const accountId = signedIn.user.accountId;
    const now = new Date();
    const [keys, grants, account] = await Promise.all([
      accountKeys.listKeys(accountId), documents.grants.listByAccount(accountId), documents.accounts.get(accountId),
    ]);
    const entries = grants.map((g) => grantEntry(g, now, deps.timezoneOffsetMinutes));
    ctx.body = {
      keys: keys.slice().reverse(),
      maxActiveKeys: MAX_ACTIVE_KEYS,
      activeGrants: entries.filter((g) => g.status === 'active' && !g.expired),
      // Every plan a key may stand on, spent ones included, so a key's plan is named by its name and state, never its id.
      keyGrants: entries.filter((g) => keys.some((k) => k.grantId === g.grantId)),
      trialAvailable: account ? !account.trialUsed : false,
    };
  });

  router.post('/console/api/keys', jsonBody, async (ctx) => {
    const who = await signedInVisitor(ctx, identity);
    requireCsrfHeader(ctx, identity, who);
    const body = validate(newKeyBody, ctx.request.body);
    ctx.status = 201;
    ctx.body = await accountKeys.issueKey(who.signedIn.user.accountId, { kind: body.kind, grantId: body.grantId || null, name: body.name || null });
  });

  router.delete('/console/api/keys/:keyId', async (ctx) => {
    const who = await signedInVisitor(ctx, identity);
    requireCsrfHeader(ctx, identity, who);
    ctx.body = await accountKeys.revokeKey(ctx.params.keyId, who.signedIn.user.accountId);
    deps.keys.forget(ctx.params.keyId);
  });

  router.post('/console/api/trial', async (ctx) => {
    const who = await signedInVisitor(ctx, identity);
    requireCsrfHeader(ctx, identity, who);
    const grant = await accountKeys.startTrial(who.signedIn.user.accountId);
    ctx.status = 201;
    ctx.body = grantEntry(grant, new Date(), deps.timezoneOffsetMinutes);
  });

  router.get('/console/api/grants', async (ctx) => {
    const { signedIn } = await signedInVisitor(ctx, identity);
    const now = new Date();
    const grants = await documents.grants.listByAccount(signedIn.user.accountId);
    ctx.body = { grants: grants.map((g) => grantEntry(g, now, deps.timezoneOffsetMinutes)) };
  });
}
