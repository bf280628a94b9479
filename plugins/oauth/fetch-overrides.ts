import { publicFetch } from './outbound-fetch.ts';

/**
 * Tests only (`OAUTH_FETCH_OVERRIDES=https://client.example.test=http://127.0.0.1:4567`):
 * the authorization server fetches client metadata documents of the named
 * https origins from a loopback server instead, so a test can serve one.
 * Everything else goes out through `publicFetch` (public https addresses only).
 */
export interface FetchOverride {
  from: string;
  to: string;
}

export function parseOverrides(spec: string): FetchOverride[] {
  return spec.split(',').map((s) => s.trim()).filter(Boolean).map((pair) => {
    const at = pair.indexOf('=');
    const from = pair.slice(0, at).replace(/\/$/, '');
    const to = pair.slice(at + 1).replace(/\/$/, '');
    if (at < 1 || !URL.canParse(from) || !URL.canParse(to)) throw new Error(`OAUTH_FETCH_OVERRIDES entry "${pair}" must look like https://origin=http://127.0.0.1:port`);
    return { from, to };
  });
}

export function fetchWithOverrides(overrides: FetchOverride[]): typeof fetch {
  return (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const hit = overrides.find((o) => url === o.from || url.startsWith(`${o.from}/`));
    if (!hit) return publicFetch(input, init);
    // The loopback target is the point here (named explicitly by the operator), so the library's guard is left out.
    const { dispatcher: _guard, ...rest } = (init ?? {}) as RequestInit & { dispatcher?: unknown };
    return fetch(hit.to + url.slice(hit.from.length), rest);
  };
}
