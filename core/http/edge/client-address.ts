import type { IncomingMessage } from 'node:http';
import type Koa from 'koa';
import ipaddr from 'ipaddr.js';
import proxyaddr from 'proxy-addr';

/**
 * Who is calling: the socket's peer, unless that peer is a trusted proxy
 * (TRUSTED_PROXIES), in which case X-Forwarded-For is walked from the right,
 * past every trusted hop, to the first address that is not one (proxy-addr,
 * Express's rule): a client cannot pass for another by sending the header
 * itself. From any other peer the forwarded headers are dropped before
 * anything reads them, so Koa's `ctx.ip`, `ctx.protocol`, `ctx.host` and
 * `ctx.secure`, and the OAuth server behind a mount, see only what a trusted
 * proxy said. Every limit per address (the edge, OAuth registration,
 * sign-in) keys on the address found here.
 */

const FORWARDED_HEADERS = ['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'x-forwarded-port', 'forwarded'];

export type TrustFn = (address: string, hop: number) => boolean;

export function trustedProxies(list: string[]): TrustFn {
  return list.length === 0 ? () => false : proxyaddr.compile(list);
}

/** One spelling per address: `::ffff:192.0.2.1` is 192.0.2.1, `2001:DB8::0:1` is 2001:db8::1. */
export function canonicalAddress(address: string): string {
  try {
    return ipaddr.process(address).toString();
  } catch {
    return address;
  }
}

/** The socket's own address: Node already writes it one way, except IPv4 mapped into IPv6. */
function peerAddress(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

/** The client's address; strips the forwarded headers an untrusted peer sent. */
export function resolveClient(req: IncomingMessage, trust: TrustFn): string {
  const peer = req.socket.remoteAddress ?? '';
  if (!trust(peer, 0)) {
    for (const name of FORWARDED_HEADERS) if (name in req.headers) delete req.headers[name];
    return peerAddress(peer);
  }
  const client = canonicalAddress(proxyaddr(req, trust));
  // Later readers of the header (Koa's ctx.ips, the OAuth server) see the address decided here.
  req.headers['x-forwarded-for'] = client;
  return client;
}

/**
 * First phase of the API listener: fixes `ctx.ip` for everything after it.
 * `selfCallClient` names the client a call of this process's own API was
 * made for (core/self-api.ts), which stands in for the loopback peer.
 */
export function clientAddress(trust: TrustFn, selfCallClient: (req: IncomingMessage) => string | null = () => null): Koa.Middleware {
  return (ctx, next) => {
    ctx.request.ip = selfCallClient(ctx.req) ?? resolveClient(ctx.req, trust);
    return next();
  };
}
