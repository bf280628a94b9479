import test from 'ava';
import { DomainError } from '../../core/errors.ts';
import { loadConfig } from '../../config/load.ts';
import type { WebhookError } from '../../core/ports/webhooks.ts';
import { isAllowedAddress, parseIPv4, parseIPv6 } from '../../core/net/addresses.ts';
import type { PostRequest, Transport } from '../../pipelines/webhook-dispatcher/http-post.ts';
import { fanOut } from '../../pipelines/webhook-dispatcher/fanout.ts';
import { ACCOUNT, T0, createWebhookHarness, failedEvent, type WebhookHarness } from '../helpers/webhook-harness.ts';

/**
 * SPEC "Destination rules", one row per destination: refused or accepted at
 * registration (POST /webhooks' service) and again at delivery (the
 * dispatcher, with a transport that records where it would have connected
 * instead of touching the network).
 */
type Refusal = 'WEBHOOK_URL_NOT_HTTPS' | 'WEBHOOK_URL_CREDENTIALS' | 'WEBHOOK_URL_BLOCKED' | 'WEBHOOK_URL_UNRESOLVABLE';
interface Row {
  url: string;
  /** accepted: the address the connection must be pinned to; refused: the registration code */
  expect: { pinned: string } | { refused: Refusal };
  tricky: boolean;
}

const DNS: Record<string, string[]> = {
  'hooks.example.com': ['93.184.216.34'],
  'hooks.example.com.': ['93.184.216.34'],
  'dual.example.com': ['2606:2800:220:1:248:1893:25c8:1946', '93.184.216.34'],
  'localtest.me': ['127.0.0.1'],
  'rebind.example': ['93.184.216.34', '10.0.0.7'],
  'v6only.example': ['fd00::5'],
  'mapped.example': ['::ffff:192.168.0.1'],
  'metadata.example': ['169.254.169.254'],
};

const ok = (pinned: string) => ({ pinned });
const no = (refused: Refusal) => ({ refused });
const BLOCKED = no('WEBHOOK_URL_BLOCKED');

const ROWS: Row[] = [
  // plain spellings
  { url: 'https://93.184.216.34/hook', expect: ok('93.184.216.34'), tricky: false },
  { url: 'https://8.8.8.8/', expect: ok('8.8.8.8'), tricky: false },
  { url: 'https://[2606:4700:4700::1111]/in', expect: ok('2606:4700:4700:0:0:0:0:1111'), tricky: false },
  { url: 'https://hooks.example.com/in', expect: ok('93.184.216.34'), tricky: false },
  { url: 'https://hooks.example.com:8443/in?x=1', expect: ok('93.184.216.34'), tricky: false },
  { url: 'https://dual.example.com/in', expect: ok('2606:2800:220:1:248:1893:25c8:1946'), tricky: false },
  { url: 'http://hooks.example.com/in', expect: no('WEBHOOK_URL_NOT_HTTPS'), tricky: false },
  { url: 'ftp://hooks.example.com/in', expect: no('WEBHOOK_URL_NOT_HTTPS'), tricky: false },
  { url: 'https://user:pass@hooks.example.com/in', expect: no('WEBHOOK_URL_CREDENTIALS'), tricky: false },
  { url: 'https://127.0.0.1/', expect: BLOCKED, tricky: false },
  { url: 'https://10.0.0.1/', expect: BLOCKED, tricky: false },
  { url: 'https://172.16.5.4/', expect: BLOCKED, tricky: false },
  { url: 'https://192.168.1.1/', expect: BLOCKED, tricky: false },
  { url: 'https://169.254.169.254/latest/meta-data', expect: BLOCKED, tricky: false },
  { url: 'https://100.64.0.1/', expect: BLOCKED, tricky: false },
  { url: 'https://224.0.0.1/', expect: BLOCKED, tricky: false },
  { url: 'https://0.0.0.0/', expect: BLOCKED, tricky: false },
  { url: 'https://192.0.2.10/', expect: BLOCKED, tricky: false },
  { url: 'https://198.18.0.1/', expect: BLOCKED, tricky: false },
  { url: 'https://240.0.0.1/', expect: BLOCKED, tricky: false },
  { url: 'https://255.255.255.255/', expect: BLOCKED, tricky: false },
  { url: 'https://[::1]/', expect: BLOCKED, tricky: false },
  { url: 'https://[fc00::1]/', expect: BLOCKED, tricky: false },
  { url: 'https://[fe80::1]/', expect: BLOCKED, tricky: false },
  { url: 'https://[ff02::1]/', expect: BLOCKED, tricky: false },
  { url: 'https://no-such-host.example/in', expect: no('WEBHOOK_URL_UNRESOLVABLE'), tricky: false },
  // tricky spellings
  { url: 'https://2130706433/', expect: BLOCKED, tricky: true },
  { url: 'https://0x7f.1/', expect: BLOCKED, tricky: true },
  { url: 'https://0177.0.0.1/', expect: BLOCKED, tricky: true },
  { url: 'https://127.1/', expect: BLOCKED, tricky: true },
  { url: 'https://0x7f000001/', expect: BLOCKED, tricky: true },
  { url: 'https://017700000001/', expect: BLOCKED, tricky: true },
  { url: 'https://3232235777/', expect: BLOCKED, tricky: true },
  { url: 'https://0xa9.0xfe.0xa9.0xfe/', expect: BLOCKED, tricky: true },
  { url: 'https://0/', expect: BLOCKED, tricky: true },
  { url: 'https://%31%32%37.0.0.1/', expect: BLOCKED, tricky: true },
  { url: 'https://\uff11\uff12\uff17.\uff10.\uff10.\uff11/', expect: BLOCKED, tricky: true },
  { url: 'https://[::ffff:127.0.0.1]/', expect: BLOCKED, tricky: true },
  { url: 'https://[::ffff:a9fe:a9fe]/', expect: BLOCKED, tricky: true },
  { url: 'https://[::ffff:8.8.8.8]/', expect: BLOCKED, tricky: true },
  { url: 'https://[::127.0.0.1]/', expect: BLOCKED, tricky: true },
  { url: 'https://[64:ff9b::10.0.0.1]/', expect: BLOCKED, tricky: true },
  { url: 'https://[2002:c0a8:101::1]/', expect: BLOCKED, tricky: true },
  { url: 'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', expect: BLOCKED, tricky: true },
  { url: 'https://[0:0:0:0:0:0:0:1]/', expect: BLOCKED, tricky: true },
  { url: 'https://[::]/', expect: BLOCKED, tricky: true },
  { url: 'https://[fd12:3456:789a::1]/', expect: BLOCKED, tricky: true },
  { url: 'https://[2001:db8::1]/', expect: BLOCKED, tricky: true },
  { url: 'https://localtest.me/in', expect: BLOCKED, tricky: true },
  { url: 'https://rebind.example/in', expect: BLOCKED, tricky: true },
  { url: 'https://v6only.example/in', expect: BLOCKED, tricky: true },
  { url: 'https://mapped.example/in', expect: BLOCKED, tricky: true },
  { url: 'https://metadata.example/in', expect: BLOCKED, tricky: true },
  { url: 'https://user@hooks.example.com/in', expect: no('WEBHOOK_URL_CREDENTIALS'), tricky: true },
  { url: 'https://127.0.0.1%2f@hooks.example.com/', expect: no('WEBHOOK_URL_CREDENTIALS'), tricky: true },
  { url: 'HTTPS://HOOKS.EXAMPLE.COM./in', expect: ok('93.184.216.34'), tricky: true },
  { url: 'https://0x08.0x08.0x08.0x08/', expect: ok('8.8.8.8'), tricky: true },
  { url: 'https://134744072/', expect: ok('8.8.8.8'), tricky: true },
  { url: 'https://:@hooks.example.com/in', expect: ok('93.184.216.34'), tricky: true },
];

function harness(t: { teardown(fn: () => Promise<void>): void }): WebhookHarness {
  const h = createWebhookHarness(false);
  for (const [name, addresses] of Object.entries(DNS)) h.dns.set(name, addresses);
  t.teardown(() => h.close());
  return h;
}

/** Stores the endpoint as if registration had accepted it, then runs one delivery with a recording transport. */
async function deliverTo(h: WebhookHarness, url: string, registeredId?: string): Promise<{ error: WebhookError | null; sentTo: PostRequest[] }> {
  const sentTo: PostRequest[] = [];
  const transport: Transport = async (request) => {
    sentTo.push(request);
    return { ok: true, statusCode: 204, durationMs: 1 };
  };
  const endpoint = registeredId ? { id: registeredId } : await h.store.createEndpoint({
    id: `we_${Math.random().toString(16).slice(2)}`, accountId: ACCOUNT, url, description: null, apiKeyId: null,
    events: ['tts.job.failed'], status: 'ENABLED', secrets: [{ secret: 'whsec_x', createdAt: new Date(T0).toISOString(), expiresAt: null }],
    secretPrefix: 'whsec_x', createdAt: new Date(T0).toISOString(),
  });
  await fanOut(h.store, failedEvent(), new Date(h.clock.now()));
  await (await h.dispatcher({ allowLoopback: false }, { transport })).runDue();
  const [delivery] = await h.store.listDeliveries(endpoint.id, 1);
  return { error: delivery.lastError, sentTo };
}

test('the table has at least 40 destinations, half of them tricky spellings', (t) => {
  t.true(ROWS.length >= 40);
  t.true(ROWS.filter((r) => r.tricky).length * 2 >= ROWS.length);
});

for (const row of ROWS) {
  const verdict = 'pinned' in row.expect ? `accepted, pinned to ${row.expect.pinned}` : `refused ${row.expect.refused}`;
  test(`${row.url} is ${verdict} at registration and at delivery`, async (t) => {
    const h = harness(t);
    // registration (under another account, so the delivery below goes to the stored endpoint alone)
    try {
      const created = await h.service.create('acct_registration', { url: row.url, events: ['tts.job.failed'] });
      t.true('pinned' in row.expect, `registration should have refused ${row.url}`);
      t.is(created.status, 'ENABLED');
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      t.true('refused' in row.expect, `registration refused ${row.url}: ${err.message}`);
      if ('refused' in row.expect) t.like(err, { kind: 'invalid', code: row.expect.refused });
    }
    // delivery
    const { error, sentTo } = await deliverTo(h, row.url);
    if ('pinned' in row.expect) {
      t.is(error, null);
      t.is(sentTo.length, 1);
      t.is(sentTo[0].destination.address, row.expect.pinned);
    } else {
      t.is(error, row.expect.refused === 'WEBHOOK_URL_UNRESOLVABLE' ? 'dns_failure' : 'blocked_private_address');
      t.is(sentTo.length, 0, 'nothing is sent to a refused destination');
    }
  });
}

test('a URL on port 0, where nothing can listen, is refused at registration as WEBHOOK_URL_INVALID', async (t) => {
  const h = harness(t);
  for (const url of ['https://93.184.216.34:0/hook', 'https://hooks.example.com:0/in']) {
    const err = await t.throwsAsync(h.service.create(ACCOUNT, { url, events: ['tts.job.failed'] }));
    t.like(err, { kind: 'invalid', code: 'WEBHOOK_URL_INVALID' }, url);
  }
});

test('a name that resolves to a private address after registration is refused at delivery', async (t) => {
  const h = harness(t);
  h.dns.set('hooks.customer.example', ['93.184.216.34']);
  const registered = await h.service.create(ACCOUNT, { url: 'https://hooks.customer.example/in', events: ['tts.job.failed'] });
  h.dns.set('hooks.customer.example', ['10.20.30.40']);
  const { error, sentTo } = await deliverTo(h, registered.url, registered.id);
  t.is(error, 'blocked_private_address');
  t.is(sentTo.length, 0);
});

test('the test-only loopback switch admits 127.0.0.0/8 and ::1 only, and is off by default', (t) => {
  const on = { allowLoopback: true };
  t.true(isAllowedAddress('127.0.0.1', on).allowed);
  t.true(isAllowedAddress('127.9.8.7', on).allowed);
  t.true(isAllowedAddress('::1', on).allowed);
  t.false(isAllowedAddress('::ffff:127.0.0.1', on).allowed);
  t.false(isAllowedAddress('10.0.0.1', on).allowed);
  t.false(isAllowedAddress('169.254.169.254', on).allowed);
  t.false(isAllowedAddress('127.0.0.1', { allowLoopback: false }).allowed);
  t.false(loadConfig({ DATA_DIR: '/tmp/webhook-config-test' }).webhooks.allowLoopback);
  t.true(loadConfig({ DATA_DIR: '/tmp/webhook-config-test', WEBHOOK_ALLOW_LOOPBACK: '1' }).webhooks.allowLoopback);
});

test('address parsers accept every IPv4 spelling and refuse malformed text', (t) => {
  t.deepEqual(parseIPv4('2130706433'), [127, 0, 0, 1]);
  t.deepEqual(parseIPv4('0x7f.1'), [127, 0, 0, 1]);
  t.deepEqual(parseIPv4('0177.0.0.01'), [127, 0, 0, 1]);
  t.deepEqual(parseIPv4('10.1'), [10, 0, 0, 1]);
  t.deepEqual(parseIPv4('192.168.257'), [192, 168, 1, 1]);
  for (const bad of ['256.0.0.1', '1.2.3.4.5', '08.0.0.1', '4294967296', 'example.com', '', '1..2']) t.is(parseIPv4(bad), null, bad);
  t.deepEqual(parseIPv6('::ffff:127.0.0.1')?.slice(10), [0xff, 0xff, 127, 0, 0, 1]);
  t.deepEqual(parseIPv6('[fe80::1%25eth0]')?.slice(0, 2), [0xfe, 0x80]);
  for (const bad of ['1::2::3', '1:2:3:4:5:6:7:8:9', '1.2.3.4::', '12345::', '::g']) t.is(parseIPv6(bad), null, bad);
});
