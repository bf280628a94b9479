import { canonicalOAuthPath } from './canonical-path.ts';
import Joi from 'joi';
import Router from '@koa/router';
import compose from 'koa-compose';
import type Koa from 'koa';
import type Provider from 'oidc-provider';
import { definePlugin } from '../../core/plugin.ts';
import { coreServices } from '../../core/services.ts';
import { openOAuthStore } from './open-store.ts';
import { createProvider } from './provider.ts';
import { interactionRoutes } from './interactions.ts';
import { accountRoutes } from './account-pages.ts';
import { upstreamRoutes } from './upstream.ts';
import { createConnections } from './connections.ts';
import { oauthVerifier } from './verifier.ts';
import { htmlErrors } from './forms.ts';
import { fetchWithOverrides, parseOverrides } from './fetch-overrides.ts';
import { OAUTH_OPERATIONS, OAUTH_SECURITY_SCHEMES } from './schemas.ts';

interface OAuthConfig {
  OAUTH_UPSTREAM_ISSUER?: string;
  OAUTH_UPSTREAM_CLIENT_ID?: string;
  OAUTH_UPSTREAM_CLIENT_SECRET?: string;
  OAUTH_UPSTREAM_NAME: string;
  OAUTH_UPSTREAM_ALLOW_HTTP: boolean;
  OAUTH_FETCH_OVERRIDES: string;
  OAUTH_REGISTRATIONS_PER_HOUR: number;
}

/**
 * The OAuth 2.1 authorization server of the platform (SPEC Authentication 7)
 * and the pages around it: sign-in, consent, connected apps, optional
 * upstream single sign-on. Its access tokens are accepted by every API route
 * (a registered credential verifier), which is how the MCP server uses them.
 */
export default definePlugin({
  id: 'oauth',
  version: '1.0.0',
  coreApi: 2,
  description: 'OAuth 2.1 authorization server (oidc-provider): registration, PKCE, consent, connected apps, refresh rotation',
  deps: {
    config: coreServices.config, logger: coreServices.logger, database: coreServices.database, identity: coreServices.identity,
    documents: coreServices.documents, selfApi: coreServices.selfApi, catalog: coreServices.catalog, counters: coreServices.counters,
  },
  config: Joi.object<OAuthConfig>({
    OAUTH_UPSTREAM_ISSUER: Joi.string().uri({ scheme: ['https', 'http'] }),
    OAUTH_UPSTREAM_CLIENT_ID: Joi.string().when('OAUTH_UPSTREAM_ISSUER', { is: Joi.exist(), then: Joi.required() }),
    OAUTH_UPSTREAM_CLIENT_SECRET: Joi.string(),
    OAUTH_UPSTREAM_NAME: Joi.string().max(60).default('single sign-on'),
    OAUTH_UPSTREAM_ALLOW_HTTP: Joi.boolean().truthy('1').falsy('0').default(false),
    OAUTH_FETCH_OVERRIDES: Joi.string().allow('').default(''),
    OAUTH_REGISTRATIONS_PER_HOUR: Joi.number().integer().min(1).default(30),
  }),
  async register({ deps, config, mount, worker, authenticator }) {
    const store = await openOAuthStore(deps.database);
    const overrides = parseOverrides(config.OAUTH_FETCH_OVERRIDES);
    if (overrides.length) deps.logger.warn('OAUTH_FETCH_OVERRIDES is set: client metadata documents of these origins are fetched from loopback (tests only)', { overrides });
    const base = () => deps.selfApi.publicBaseUrl();
    const resources = () => [`${base()}/mcp`, `${base()}/api/v1`];

    let provider: Promise<Provider> | null = null;
    // Built on first use: the issuer is {base_url}, known once the listener is up.
    const getProvider = () => {
      provider ??= createProvider(
        { issuer: base(), resources: resources(), cookieSecret: deps.config.identity.sessionSecret, fetch: fetchWithOverrides(overrides) },
        { store, identity: deps.identity, logger: deps.logger },
      ).catch((err: unknown) => {
        provider = null;
        throw err;
      });
      return provider;
    };
    // The library builds every URL it answers (the metadata's endpoints, its redirects) from the request's host. With
    // PUBLIC_BASE_URL set (as in every deployment) the host is that one: a forged Host sent clients' codes, verifiers and
    // secrets to another token endpoint wherever a shared cache kept the poisoned metadata. Without it the issuer is this
    // process's own listener, a local setup whose browser may use another name for it (localhost), so the Host stays.
    const pinned = deps.config.publicBaseUrl ? new URL(deps.config.publicBaseUrl) : null;
    const delegate = async (ctx: Koa.Context, path?: string) => {
      const op = await getProvider();
      if (path) ctx.req.url = path;
      if (pinned) {
        ctx.req.headers.host = pinned.host;
        ctx.req.headers['x-forwarded-proto'] = pinned.protocol.slice(0, -1);
        delete ctx.req.headers['x-forwarded-host'];
      }
      ctx.respond = false;
      await op.callback()(ctx.req, ctx.res);
    };

    const connections = createConnections(store, getProvider);
    const upstreamLabel = config.OAUTH_UPSTREAM_ISSUER ? config.OAUTH_UPSTREAM_NAME : null;
    const router = new Router();
    interactionRoutes(router, { provider: getProvider, identity: deps.identity, upstreamLabel });
    accountRoutes(router, { identity: deps.identity, connections, upstreamLabel });
    if (config.OAUTH_UPSTREAM_ISSUER) {
      upstreamRoutes(router, {
        settings: {
          issuer: config.OAUTH_UPSTREAM_ISSUER, clientId: config.OAUTH_UPSTREAM_CLIENT_ID!, clientSecret: config.OAUTH_UPSTREAM_CLIENT_SECRET ?? null,
          label: config.OAUTH_UPSTREAM_NAME, allowHttp: config.OAUTH_UPSTREAM_ALLOW_HTTP,
        },
        baseUrl: base, store, identity: deps.identity, logger: deps.logger,
      });
    }

    // oidc-provider matches its routes in any case and with one trailing slash; every rule here compares paths
    // exactly. One spelling for all, before anything looks: `/oauth/Authorize/` is `/oauth/authorize`.
    const canonicalPath: Koa.Middleware = (ctx, next) => {
      const canonical = canonicalOAuthPath(ctx.path);
      if (canonical !== ctx.path) ctx.path = canonical;
      return next();
    };
    // Registration is open (MCP clients register themselves), so it is limited per client address: every attempt counts,
    // refused ones too. The refusal is in OAuth's error shape (RFC 7591 3.2.2), as the endpoint's other answers are, so that
    // a client library can read it; RFC 7591 has no code for it, and RFC 6749's `temporarily_unavailable` says "retry later".
    const registrationLimit: Koa.Middleware = async (ctx, next) => {
      if (ctx.method === 'POST' && ctx.path === '/oauth/register') {
        const decision = await deps.counters.rateLimiter.consume(`oauth-register:${ctx.ip}`, config.OAUTH_REGISTRATIONS_PER_HOUR, 3600);
        if (!decision.allowed) {
          const retryAfterSeconds = Math.max(1, Math.ceil(decision.resetMs / 1000));
          ctx.status = 429;
          ctx.set('Retry-After', String(retryAfterSeconds));
          ctx.set('Cache-Control', 'no-store');
          ctx.body = {
            error: 'temporarily_unavailable',
            error_description: `Too many client registrations from this address (at most ${config.OAUTH_REGISTRATIONS_PER_HOUR} an hour, refused ones included); retry in ${retryAfterSeconds} seconds.`,
          };
          return;
        }
      }
      await next();
    };
    // Browser MCP clients register themselves as they fetch the metadata and tokens (which the library serves with CORS):
    // registration is open and uses no cookie, so any origin may call it.
    const registrationCors: Koa.Middleware = async (ctx, next) => {
      if (ctx.path !== '/oauth/register') return next();
      ctx.set('Access-Control-Allow-Origin', '*');
      if (ctx.method !== 'OPTIONS') return next();
      ctx.set('Access-Control-Allow-Methods', 'POST');
      ctx.set('Access-Control-Allow-Headers', 'Content-Type, Authorization');
      ctx.set('Access-Control-Max-Age', '3600');
      ctx.status = 204;
    };
    mount({
      prefix: '/oauth',
      middleware: compose<any>([canonicalPath, registrationCors, htmlErrors(deps.logger, ['/oauth/connections', '/oauth/register']), registrationLimit, router.routes(), async (ctx: Koa.Context) => delegate(ctx)]),
      operations: OAUTH_OPERATIONS.filter((op) => op.path.startsWith('/oauth/')),
      securitySchemes: OAUTH_SECURITY_SCHEMES,
    });
    // RFC 8414 metadata is the library's discovery document (same fields), served at its own address too.
    mount({
      prefix: '/.well-known/oauth-authorization-server',
      middleware: (ctx) => delegate(ctx as Koa.Context, '/.well-known/openid-configuration'),
      operations: OAUTH_OPERATIONS.filter((op) => op.path.startsWith('/.well-known/')),
    });
    mount({ prefix: '/.well-known/openid-configuration', middleware: (ctx) => delegate(ctx as Koa.Context) });

    authenticator(oauthVerifier({
      provider: getProvider, identity: deps.identity, documents: deps.documents, audiences: resources, defaultEngine: deps.catalog.defaultEngine(),
    }));

    worker({
      name: 'purge-expired-oauth-records',
      role: 'api',
      async start() {
        const timer = setInterval(() => {
          store.purgeExpired(Date.now()).catch((err: unknown) => deps.logger.warn('expired OAuth records could not be purged', { err: err as Error }));
        }, 10 * 60_000);
        timer.unref();
        return async () => clearInterval(timer);
      },
    });
  },
});
