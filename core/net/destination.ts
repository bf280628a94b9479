import { lookup } from 'node:dns/promises';
import { isAllowedAddress, parseAddress, formatAddress, type AddressKind } from './addresses.ts';

/**
 * Destination rules (SPEC): https only, no credentials in the URL, public
 * addresses only. Checked at registration and again before every delivery.
 * A host name is resolved here, every address it resolves to must be
 * public, and the caller connects to the returned `address` itself: the
 * connection is pinned to what was checked, so no second resolution can be
 * steered to a private address (DNS rebinding).
 */

/** Resolves a host name to all of its addresses. Injectable so tests can stage any answer. */
export type Resolver = (hostname: string) => Promise<string[]>;

export const systemResolver: Resolver = async (hostname) => {
  const answers = await lookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => a.address);
};

export interface DestinationPolicy {
  /** test-only: admits 127.0.0.0/8 and ::1 (config.webhooks.allowLoopback, off by default) */
  allowLoopback: boolean;
  resolve: Resolver;
}

export type DestinationRefusal = 'invalid_url' | 'not_https' | 'credentials' | 'blocked_private_address' | 'dns_failure';

export class DestinationError extends Error {
  readonly reason: DestinationRefusal;
  constructor(reason: DestinationRefusal, message: string) {
    super(message);
    this.name = 'DestinationError';
    this.reason = reason;
  }
}

export interface CheckedDestination {
  url: URL;
  /** host name for SNI, certificate checks and the Host header (no brackets); an address when the URL names one */
  hostname: string;
  port: number;
  /** the checked address the connection must use */
  address: string;
  family: 4 | 6;
  /** every address the name resolved to, all checked */
  addresses: string[];
}

const MAX_URL_LENGTH = 2048;

const KIND_WORDS: Record<Exclude<AddressKind, 'public'> | 'invalid', string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  link_local: 'a link-local address',
  carrier_nat: 'a carrier-grade NAT address',
  multicast: 'a multicast address',
  unspecified: 'an unspecified address',
  reserved: 'a reserved address',
  documentation: 'a documentation address',
  benchmarking: 'a benchmarking address',
  unique_local: 'an IPv6 unique-local address',
  site_local: 'an IPv6 site-local address',
  embedded_ipv4: 'an IPv6 address carrying an IPv4 address',
  invalid: 'an address that cannot be parsed',
};

/** The static URL rules: parseable, https, no credentials. */
export function parseDestinationUrl(raw: string): { url: URL; hostname: string } {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > MAX_URL_LENGTH) {
    throw new DestinationError('invalid_url', `url must be an absolute https URL of at most ${MAX_URL_LENGTH} characters.`);
  }
  // The URL parser would drop tabs and newlines and escape other control characters and spaces: the URL shown
  // to the user would then not be the one delivered to.
  if (/[\u0000-\u0020\u007f]/.test(raw)) throw new DestinationError('invalid_url', 'url must not contain spaces or control characters.');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DestinationError('invalid_url', 'url is not a valid absolute URL.');
  }
  if (url.protocol !== 'https:') throw new DestinationError('not_https', 'url must use https; http is refused in every mode.');
  if (url.username !== '' || url.password !== '') throw new DestinationError('credentials', 'url must not carry credentials (user:password@).');
  // The WHATWG parser has already turned every IPv4 spelling (2130706433, 0x7f.1, 0177.0.0.1, 127.1) into dotted form.
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (hostname === '') throw new DestinationError('invalid_url', 'url has no host.');
  // Port 0 parses, but no connection can be made to it: every delivery would fail.
  if (url.port === '0') throw new DestinationError('invalid_url', 'url has port 0, which nothing can listen on.');
  return { url, hostname };
}

/** Applies every rule and returns the pinned address, or throws DestinationError. */
export async function checkDestination(raw: string, policy: DestinationPolicy): Promise<CheckedDestination> {
  const { url, hostname } = parseDestinationUrl(raw);
  const port = url.port === '' ? 443 : Number(url.port);
  const literal = parseAddress(hostname);
  let addresses: string[];
  if (literal) {
    addresses = [hostname];
  } else {
    try {
      addresses = await policy.resolve(hostname);
    } catch (err) {
      throw new DestinationError('dns_failure', `The host ${hostname} could not be resolved (${(err as { code?: string }).code ?? (err as Error).message}).`);
    }
    if (addresses.length === 0) throw new DestinationError('dns_failure', `The host ${hostname} resolved to no address.`);
  }
  for (const address of addresses) {
    const verdict = isAllowedAddress(address, policy);
    if (!verdict.allowed) {
      const words = KIND_WORDS[verdict.kind as Exclude<AddressKind, 'public'> | 'invalid'];
      const via = literal ? '' : ` (${hostname} resolves to ${address})`;
      throw new DestinationError('blocked_private_address', `url points to ${words}${via}; webhooks are delivered to public addresses only.`);
    }
  }
  const pinned = parseAddress(addresses[0])!;
  return { url, hostname, port, address: formatAddress(pinned), family: pinned.family, addresses };
}
