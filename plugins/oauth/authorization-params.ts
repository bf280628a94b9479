import type { KoaContextWithOIDC } from 'oidc-provider';
import { applyPageSecurity } from '../../core/http/page-security.ts';
import { readForm, writeForm } from './library-body.ts';

/**
 * Two changes around oidc-provider's authorization endpoint
 * (`/oauth/authorize`, and `/oauth/authorize/{uid}` where it resumes).
 */

type Next = () => Promise<void>;
const isAuthorization = (path: string) => path === '/oauth/authorize' || path.startsWith('/oauth/authorize/');

/**
 * Only the platform's scopes (README, SPEC: `tts` and `offline_access`) stay
 * in an authorization request. The library always knows OpenID's `openid`,
 * which would give the client an ID token about the user; it is dropped
 * here, from the query and from a POSTed form alike. And `required` (`tts`)
 * is always asked for: a token without it is refused by every route, so a
 * request with no scope, only OpenID's, or `offline_access` alone is taken
 * as asking for it (RFC 6749 3.3's documented default). Without it such a
 * request ended after the user had signed in, as `access_denied`, or with
 * a refresh token good for nothing.
 */
export function onlyScopes(allowed: string[], required: string) {
  const keep = (scope: string | null) => {
    const asked = new Set((scope ?? '').split(' '));
    return allowed.filter((s) => s === required || asked.has(s)).join(' ');
  };
  const filter = (params: URLSearchParams): boolean => {
    const kept = keep(params.get('scope'));
    if (kept === params.get('scope')) return false;
    params.set('scope', kept);
    return true;
  };
  return async (ctx: KoaContextWithOIDC, next: Next) => {
    if (ctx.path === '/oauth/authorize' && ctx.method === 'GET') {
      const query = new URLSearchParams(ctx.querystring);
      if (filter(query)) ctx.querystring = query.toString();
    } else if (ctx.path === '/oauth/authorize' && ctx.method === 'POST') {
      const form = await readForm(ctx);
      if (form === 'refused') return;
      if (form && filter(form)) writeForm(ctx, form);
    }
    await next();
  };
}

// Set before the library renders; its form_post page adds its inline script's hash to this directive.
const PLACEHOLDER = "script-src 'none'";

/**
 * `response_mode=form_post` answers with the library's self-submitting page:
 * it gets the headers of the sign-in pages (README), with the hash of the
 * library's one inline script and the client's redirect origin as the only
 * form action. Other answers of the endpoint (redirects) are left as they were.
 */
export async function applyPageSecurityToFormPost(ctx: KoaContextWithOIDC, next: Next) {
  if (!isAuthorization(ctx.path)) return next();
  ctx.set('Content-Security-Policy', PLACEHOLDER);
  await next();
  const csp = ctx.response.get('Content-Security-Policy');
  if (typeof csp !== 'string' || !csp.startsWith(PLACEHOLDER)) return; // replaced (an error page renders its own)
  ctx.remove('Content-Security-Policy');
  if (ctx.oidc?.responseMode !== 'form_post' || !ctx.response.is('html')) return;
  const hashes = csp.match(/'sha256-[A-Za-z0-9+/=]+'/g) ?? [];
  const redirect = URL.parse(String(ctx.oidc.params?.redirect_uri ?? ''));
  applyPageSecurity(ctx as never, { formActions: redirect ? [redirect.origin] : [] });
  const page = ctx.response.get('Content-Security-Policy') as string;
  ctx.set('Content-Security-Policy', page.replace(/script-src [^;]*/, (directive) => [directive, ...hashes].join(' ')));
}
