/**
 * IP address classification for the webhook destination rules (SPEC:
 * Destination rules). One address has many spellings: `2130706433`,
 * `0x7f.1`, `0177.0.0.1` and `127.1` are all 127.0.0.1, and IPv6 can carry
 * an IPv4 address inside it (mapped, compatible, NAT64, 6to4, Teredo).
 * Parsing is ipaddr.js's (it accepts every IPv4 spelling inet_aton and the
 * WHATWG URL parser do); the classification below works on the bytes.
 */
import ipaddr from 'ipaddr.js';

export type AddressKind =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link_local'
  | 'carrier_nat'
  | 'multicast'
  | 'unspecified'
  | 'reserved'
  | 'documentation'
  | 'benchmarking'
  | 'unique_local'
  | 'site_local'
  | 'embedded_ipv4';

export interface ParsedAddress {
  family: 4 | 6;
  bytes: number[];
}

/** Brackets, an IPv6 zone (`%eth0`, `%25eth0`) and a single trailing dot are spelling, not address. */
function bare(text: string): string {
  let s = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  return s.endsWith('.') && !s.endsWith('..') ? s.slice(0, -1) : s;
}

/** Every IPv4 spelling inet_aton and the WHATWG URL parser accept, as four bytes; null otherwise. */
export function parseIPv4(text: string): number[] | null {
  const s = bare(text);
  return ipaddr.IPv4.isValid(s) ? ipaddr.IPv4.parse(s).toByteArray() : null;
}

/** IPv6 text (brackets and a zone id are tolerated) as 16 bytes; null otherwise. */
export function parseIPv6(text: string): number[] | null {
  const s = bare(text);
  return ipaddr.IPv6.isValid(s) ? ipaddr.IPv6.parse(s).toByteArray() : null;
}

export function parseAddress(text: string): ParsedAddress | null {
  const v6 = parseIPv6(text);
  if (v6) return { family: 6, bytes: v6 };
  const v4 = parseIPv4(text);
  return v4 ? { family: 4, bytes: v4 } : null;
}

type Rule = [prefix: number[], bits: number, kind: AddressKind];

const IPV4_RULES: Rule[] = [
  [[0], 8, 'unspecified'],
  [[10], 8, 'private'],
  [[100, 64], 10, 'carrier_nat'],
  [[127], 8, 'loopback'],
  [[169, 254], 16, 'link_local'],
  [[172, 16], 12, 'private'],
  [[192, 0, 0], 24, 'reserved'],
  [[192, 0, 2], 24, 'documentation'],
  [[192, 88, 99], 24, 'reserved'],
  [[192, 168], 16, 'private'],
  [[198, 18], 15, 'benchmarking'],
  [[198, 51, 100], 24, 'documentation'],
  [[203, 0, 113], 24, 'documentation'],
  [[224], 4, 'multicast'],
  [[240], 4, 'reserved'],
];

const hex = (...groups: number[]) => groups.flatMap((g) => [g >> 8, g & 0xff]);

/** First match wins, so the narrow blocks come before the wide ones that contain them. */
const IPV6_RULES: Rule[] = [
  [hex(0, 0, 0, 0, 0, 0, 0, 0), 128, 'unspecified'],
  [hex(0, 0, 0, 0, 0, 0, 0, 1), 128, 'loopback'],
  [hex(0, 0, 0, 0, 0, 0xffff), 96, 'embedded_ipv4'], // IPv4-mapped
  [hex(0, 0, 0, 0, 0xffff, 0), 96, 'embedded_ipv4'], // IPv4-translated (SIIT)
  [hex(0, 0, 0, 0, 0, 0), 96, 'embedded_ipv4'], // IPv4-compatible
  [hex(0x64, 0xff9b, 0, 0, 0, 0), 96, 'embedded_ipv4'], // NAT64
  [hex(0x64, 0xff9b, 1), 48, 'embedded_ipv4'], // local-use NAT64
  [hex(0x100, 0, 0, 0), 64, 'reserved'], // discard-only
  [hex(0x2001, 0), 32, 'embedded_ipv4'], // Teredo
  [hex(0x2001, 0x2, 0), 48, 'benchmarking'],
  [hex(0x2001, 0xdb8), 32, 'documentation'],
  [hex(0x2001), 23, 'reserved'], // IETF protocol assignments
  [hex(0x2002), 16, 'embedded_ipv4'], // 6to4
  [hex(0x3fff), 20, 'documentation'],
  [hex(0x5f00), 16, 'reserved'], // SRv6 SIDs
  [hex(0xfc00), 7, 'unique_local'],
  [hex(0xfe80), 10, 'link_local'],
  [hex(0xfec0), 10, 'site_local'],
  [hex(0xff00), 8, 'multicast'],
];

function matches(bytes: number[], prefix: number[], bits: number): boolean {
  for (let bit = 0; bit < bits; bit++) {
    const byte = bit >> 3;
    const mask = 0x80 >> (bit & 7);
    if ((bytes[byte] & mask) !== ((prefix[byte] ?? 0) & mask)) return false;
  }
  return true;
}

export function classifyAddress(address: ParsedAddress): AddressKind {
  const rules = address.family === 4 ? IPV4_RULES : IPV6_RULES;
  for (const [prefix, bits, kind] of rules) if (matches(address.bytes, prefix, bits)) return kind;
  // Only 2000::/3 is global unicast; everything else in IPv6 is unassigned or special.
  if (address.family === 6 && !matches(address.bytes, [0x20], 3)) return 'reserved';
  return 'public';
}

/**
 * Whether a delivery may connect to this address. The test-only switch
 * `allowLoopback` admits 127.0.0.0/8 and ::1 in their plain forms, nothing
 * else (an IPv4-mapped ::ffff:127.0.0.1 stays refused).
 */
export function isAllowedAddress(text: string, options: { allowLoopback: boolean }): { allowed: boolean; kind: AddressKind | 'invalid' } {
  const parsed = parseAddress(text);
  if (!parsed) return { allowed: false, kind: 'invalid' };
  const kind = classifyAddress(parsed);
  return { allowed: kind === 'public' || (kind === 'loopback' && options.allowLoopback), kind };
}

/** Canonical text of a parsed address, as net.connect expects it. */
export function formatAddress(address: ParsedAddress): string {
  const parsed = ipaddr.fromByteArray(address.bytes);
  return parsed.kind() === 'ipv6' ? (parsed as ipaddr.IPv6).toNormalizedString() : parsed.toString();
}
