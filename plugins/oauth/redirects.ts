/** Loopback redirect URIs (RFC 8252 7.3): they match whatever port the client listens on this time. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

export function isLoopbackRedirect(value: string): boolean {
  const url = URL.parse(value);
  return url !== null && url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}

/** Same scheme, host, path and query; the port may differ. */
export function sameLoopbackRedirect(registered: string, presented: string): boolean {
  const a = URL.parse(registered);
  const b = URL.parse(presented);
  if (!a || !b || !isLoopbackRedirect(registered) || !isLoopbackRedirect(presented)) return false;
  return a.hostname === b.hostname && a.pathname === b.pathname && a.search === b.search && a.hash === '' && b.hash === '';
}

/**
 * OAuth 2.1 and the MCP authorization spec: a redirect URI is https, or
 * http on a loopback host only (exactly these names: `localhost.evil.example`
 * is not one), so the code never travels unencrypted over a network.
 * A native app's private-use scheme (`com.example.app:/cb`) stays as the
 * library checks it (application_type `native`); a web client gets only
 * web URIs from the library. Returns why a URI is refused, or null.
 */
export function redirectUriRefusal(value: unknown): string | null {
  const url = typeof value === 'string' ? URL.parse(value) : null;
  if (!url) return null; // the library refuses what does not parse
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname)) {
    return 'must use https; http is accepted only on a loopback host (127.0.0.1, [::1], localhost)';
  }
  return null;
}
