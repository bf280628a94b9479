import test from 'ava';
import type { IncomingMessage } from 'node:http';
import { resolveClient, trustedProxies } from '../../core/http/edge/client-address.ts';

/** The client address rule of the edge limits: X-Forwarded-For only from TRUSTED_PROXIES, walked from the right. */

function request(peer: string, headers: Record<string, string>): IncomingMessage {
  const socket = { remoteAddress: peer };
  return { socket, connection: socket, headers: { ...headers } } as unknown as IncomingMessage;
}

test('without trusted proxies the peer is the client and forwarded headers are dropped', (t) => {
  const req = request('192.0.2.10', { 'x-forwarded-for': '203.0.113.5', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example', forwarded: 'for=1.2.3.4' });
  t.is(resolveClient(req, trustedProxies([])), '192.0.2.10');
  t.deepEqual(Object.keys(req.headers), []);
});

test('from a trusted proxy the rightmost untrusted address of X-Forwarded-For is the client; what the client wrote to the left is ignored', (t) => {
  const trust = trustedProxies(['10.0.0.0/8', 'loopback']);
  const req = request('10.0.0.7', { 'x-forwarded-for': '198.51.100.1, 203.0.113.5, 10.2.3.4', 'x-forwarded-proto': 'https' });
  t.is(resolveClient(req, trust), '203.0.113.5');
  t.is(req.headers['x-forwarded-for'], '203.0.113.5', 'later readers see the decided address');
  t.is(req.headers['x-forwarded-proto'], 'https', 'the trusted proxy may say https');
});

test('a trusted proxy that sends no X-Forwarded-For is itself the client; IPv4-mapped IPv6 is written as IPv4', (t) => {
  t.is(resolveClient(request('::ffff:127.0.0.1', {}), trustedProxies(['127.0.0.1'])), '127.0.0.1');
  t.is(resolveClient(request('::ffff:192.0.2.1', { 'x-forwarded-for': '203.0.113.9' }), trustedProxies([])), '192.0.2.1');
});

test('an untrusted peer cannot pass for a trusted one by naming it in the header', (t) => {
  const req = request('203.0.113.66', { 'x-forwarded-for': '10.0.0.1' });
  t.is(resolveClient(req, trustedProxies(['10.0.0.0/8'])), '203.0.113.66');
});
