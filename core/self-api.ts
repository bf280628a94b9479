import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * The platform's own API as a feature can call it: a plugin that offers the
 * API in another shape (the MCP server) sends its requests through the very
 * same request phases (authentication, rate limits, billing, outcome events)
 * by calling this process's API listener over loopback, with the caller's
 * own credential.
 *
 * Such a call comes from 127.0.0.1, so every limit per address (the edge)
 * would count all callers' calls as one address's, and one busy MCP client
 * could use up everyone's share. A call made for a client therefore names
 * that client's address, under a secret only this process knows, and the
 * API listener takes the address from it as it would from a trusted proxy.
 */
export interface SelfApi {
  /** `{base_url}`: PUBLIC_BASE_URL, or this process's API listener when it is unset */
  publicBaseUrl(): string;
  /**
   * `fetch` of a path (e.g. `/api/v1/balance`) on this process's API listener,
   * on behalf of the client at `clientAddress` (the limits per address count
   * the call as that client's)
   */
  fetch(pathname: string, init?: RequestInit, clientAddress?: string): Promise<Response>;
}

export interface BindableSelfApi extends SelfApi {
  /** called by the kernel once the API listener is up */
  bind(localUrl: string): void;
  /**
   * The client a request from this process's own fetch was made for, or null
   * for any other request. Strips the naming headers from every request, so
   * that nothing after the listener's first phase sees them.
   */
  clientOf(req: IncomingMessage): string | null;
}

const TOKEN_HEADER = 'x-vieneu-self-call';
const CLIENT_HEADER = 'x-vieneu-self-client';

const isLoopback = (address: string | undefined) => address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1';

export function createSelfApi(publicBaseUrl: string | null): BindableSelfApi {
  let local: string | null = null;
  const token = randomBytes(32);
  const tokenText = token.toString('base64url');
  const needLocal = () => {
    if (!local) throw new Error('the API listener is not running in this process (no api role, or not started yet)');
    return local;
  };
  return {
    publicBaseUrl: () => (publicBaseUrl ?? needLocal()).replace(/\/$/, ''),
    fetch(pathname, init, clientAddress) {
      if (clientAddress === undefined) return fetch(needLocal() + pathname, init);
      const headers = new Headers(init?.headers);
      headers.set(TOKEN_HEADER, tokenText);
      headers.set(CLIENT_HEADER, clientAddress);
      return fetch(needLocal() + pathname, { ...init, headers });
    },
    bind(localUrl) {
      local = localUrl.replace(/\/$/, '');
    },
    clientOf(req) {
      const presented = req.headers[TOKEN_HEADER];
      const client = req.headers[CLIENT_HEADER];
      delete req.headers[TOKEN_HEADER];
      delete req.headers[CLIENT_HEADER];
      if (typeof presented !== 'string' || typeof client !== 'string' || client === '' || !isLoopback(req.socket.remoteAddress)) return null;
      const bytes = Buffer.from(presented, 'base64url');
      return bytes.length === token.length && timingSafeEqual(bytes, token) ? client : null;
    },
  };
}
