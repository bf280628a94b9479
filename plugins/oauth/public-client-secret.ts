import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { readForm, writeForm } from './library-body.ts';

/**
 * SPEC: registration always returns a `client_secret`, "required only for
 * the two secret methods". A public (`none`) client that sends it anyway
 * (the MCP SDK does, with `client_secret_basic`, when it kept only the
 * client_id and secret) is accepted when the secret is the one it was
 * issued: the request goes on to the library as the `none` authentication
 * it registered. A wrong secret is left for the library to refuse
 * (`invalid_client`), as is every client of the secret methods.
 */

const CLIENT_AUTH_PATHS = new Set(['/oauth/token', '/oauth/revoke']);

/** `Basic base64(urlencoded id ":" urlencoded secret)` (RFC 6749 2.3.1), or null. */
function basicCredentials(header: string | undefined): { id: string; secret: string } | null {
  const match = /^basic\s+([A-Za-z0-9+/]+={0,2})$/i.exec(header ?? '');
  if (!match) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 1) return null;
  try {
    const unescape = (s: string) => decodeURIComponent(s.replace(/\+/g, '%20'));
    return { id: unescape(decoded.slice(0, colon)), secret: unescape(decoded.slice(colon + 1)) };
  } catch {
    return null;
  }
}

export function acceptIssuedSecretOfPublicClients(provider: Provider) {
  return async (ctx: KoaContextWithOIDC, next: () => Promise<void>) => {
    if (ctx.method !== 'POST' || !CLIENT_AUTH_PATHS.has(ctx.path)) return next();
    const basic = basicCredentials(ctx.headers.authorization);
    const form = await readForm(ctx);
    if (form === 'refused') return;
    const clientId = basic?.id ?? form?.get('client_id');
    const secret = basic?.secret ?? form?.get('client_secret');
    if (!form || !clientId || !secret) return next();
    if (basic && form.has('client_id') && form.get('client_id') !== basic.id) return next(); // the library refuses the mismatch
    const client = await provider.Client.find(clientId).catch(() => undefined);
    if (client?.clientAuthMethod === 'none' && client.clientSecret && (await client.compareClientSecret(secret))) {
      delete ctx.headers.authorization;
      form.set('client_id', clientId);
      form.delete('client_secret');
      writeForm(ctx, form);
    }
    return next();
  };
}
