import https from 'node:https';
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { isIP } from 'node:net';
import { Readable } from 'node:stream';
import { isAllowedAddress } from '../../core/net/addresses.ts';

/**
 * Every request the authorization server sends out (client ID metadata
 * documents, a client's jwks_uri): the URL is named by whoever calls
 * `/oauth/authorize` or `/oauth/register`, without signing in, so it must not
 * reach this network. https only, and the address is checked where the
 * socket is opened: an address literal before connecting, a host name on
 * the addresses DNS answers to the connection itself (so a second answer
 * cannot be steered elsewhere). Loopback, private, link-local, unique-local,
 * carrier-grade NAT, multicast, unspecified, reserved and IPv4 carried in
 * IPv6 are refused by core's address rules (the webhooks' rules). The
 * library's own guard only destroys the socket after it has connected.
 *
 * A refused address, a refused connection, a DNS failure and a timeout all
 * end in the same error, so the answers cannot be used to map the network.
 * Redirects are never followed.
 */

export class OutboundFetchError extends Error {
  constructor() {
    super('the URL could not be fetched');
    this.name = 'OutboundFetchError';
  }
}

const publicAddress = (address: string) => isAllowedAddress(address, { allowLoopback: false }).allowed;

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** dns.lookup that answers only when every address of the name is public, in the form net.connect asked for. */
function publicLookup(hostname: string, options: { all?: boolean; family?: number | string }, callback: LookupCallback): void {
  const { all, ...rest } = options;
  dnsLookup(hostname, { ...rest, all: true } as LookupAllOptions, (err, addresses) => {
    if (err) return callback(err, []);
    if (addresses.length === 0 || !addresses.every((a) => publicAddress(a.address))) {
      return callback(Object.assign(new Error('not a public address'), { code: 'EADDRNOTPUBLIC' }), []);
    }
    if (all) return callback(null, addresses);
    return callback(null, addresses[0].address, addresses[0].family);
  });
}

const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);

function responseHeaders(raw: Record<string, string | string[] | undefined>): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, v);
  }
  return headers;
}

/** `fetch` for public https addresses only (see above); throws OutboundFetchError for everything else. */
export const publicFetch: typeof fetch = async (input, init) => {
  const url = URL.parse(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
  if (!url || url.protocol !== 'https:' || url.username || url.password) throw new OutboundFetchError();
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  // An address literal is connected to without a lookup, so it is checked here.
  if (isIP(hostname) && !publicAddress(hostname)) throw new OutboundFetchError();
  const method = init?.method ?? 'GET';
  const body = typeof init?.body === 'string' ? init.body : undefined;
  return new Promise<Response>((resolve, reject) => {
    const fail = () => reject(new OutboundFetchError());
    const req = https.request({
      hostname, port: url.port || 443, path: `${url.pathname}${url.search}`, method,
      headers: Object.fromEntries(new Headers(init?.headers)), lookup: publicLookup as never, signal: init?.signal ?? undefined, agent: false,
    }, (res) => {
      try {
        const status = res.statusCode ?? 0;
        const stream = NULL_BODY_STATUS.has(status) || method === 'HEAD' ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
        if (!stream) res.resume();
        res.on('error', () => {});
        resolve(new Response(stream, { status, headers: responseHeaders(res.headers) }));
      } catch {
        res.destroy();
        fail();
      }
    });
    req.on('error', fail);
    req.end(body);
  });
};
