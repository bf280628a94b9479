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
