import test from 'ava';
import net from 'node:net';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { OutboundFetchError, publicFetch } from '../../plugins/oauth/outbound-fetch.ts';
import { fetchWithOverrides } from '../../plugins/oauth/fetch-overrides.ts';

/**
 * The authorization server's outbound requests (client ID metadata
 * documents, jwks_uri): nothing on this network is ever connected to, and
 * every failure is the same error.
 */

let trap: net.Server;
let port = 0;
let connections = 0;

test.before(async () => {
  trap = net.createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => trap.listen(0, resolve));
  port = (trap.address() as AddressInfo).port;
});
test.after.always(() => trap?.close());

test('loopback, private, link-local, unique-local, CGNAT, multicast, unspecified and IPv4-in-IPv6 are refused before connecting', async (t) => {
  const urls = [
    `https://127.0.0.1:${port}/x`, `https://127.1:${port}/x`, `https://2130706433:${port}/x`, `https://[::1]:${port}/x`,
    `https://[::ffff:127.0.0.1]:${port}/x`, `https://[::ffff:7f00:1]:${port}/x`, `https://[::127.0.0.1]:${port}/x`,
    `https://localhost:${port}/x`, // a name: refused on the address it resolves to, at connect time
    'https://10.0.0.1/x', 'https://172.16.0.1/x', 'https://192.168.1.1/x', 'https://169.254.169.254/latest/meta-data/',
    'https://100.64.0.1/x', 'https://224.0.0.1/x', 'https://0.0.0.0/x', 'https://[::]/x', 'https://[fd12:3456::1]/x',
    'https://[fe80::1]/x', 'https://[ff02::1]/x', 'https://[64:ff9b::a00:1]/x',
    `http://127.0.0.1:${port}/x`, 'http://example.com/x', 'https://user:pw@example.com/x', // not https, or credentials
    'https://no-such-host.invalid/x', // no such name: the same error as a blocked address
  ];
  for (const url of urls) {
    const err = await t.throwsAsync(publicFetch(url, { method: 'GET' }), { instanceOf: OutboundFetchError }, url);
    t.is(err?.message, 'the URL could not be fetched', url);
  }
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.is(connections, 0, 'nothing connected to the loopback listener');
});

test('OAUTH_FETCH_OVERRIDES reaches only the loopback server it names; everything else stays guarded', async (t) => {
  const server = http.createServer((req, res) => res.end(JSON.stringify({ path: req.url })));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const to = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const guarded = fetchWithOverrides([{ from: 'https://client.example.test', to }]);
    t.deepEqual(await (await guarded('https://client.example.test/doc.json')).json(), { path: '/doc.json' });
    await t.throwsAsync(guarded(`https://127.0.0.1:${port}/x`), { instanceOf: OutboundFetchError });
    await t.throwsAsync(guarded('https://client.example.test.evil.example/x'), { instanceOf: OutboundFetchError });
  } finally {
    server.close();
  }
});
