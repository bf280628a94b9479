import test from 'ava';
import { TOPICS, type BusMessage, type Subscription } from '../../core/ports/bus.ts';
import type { OutcomeEvent } from '../../core/ports/analytics.ts';
import { findClickHouseServer, startPrivateClickHouse, type PrivateClickHouse } from '../helpers/private-clickhouse.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait.ts';
import { coreServices } from '../../core/services.ts';

/**
 * The usage aggregator against a ClickHouse that goes away mid-traffic: a
 * private server (this test stops it) behind the real platform in process.
 * Events published while it is down stay uncommitted on the bus, the batch
 * is retried until the server is back, and the store's dedupe on event id
 * keeps redeliveries from counting twice.
 */

const TITLE = 'ClickHouse stopped during traffic, then started: every usage event arrives once, none lost, none doubled';
const GROUP = 'usage-aggregator';

/** Tracked requests of three kinds, each with the status it must answer. */
type Kind = 'tts' | 'invalid' | 'clone';
const EXPECTED_STATUS: Record<Kind, number> = { tts: 201, invalid: 400, clone: 410 };

const server = findClickHouseServer();
if (!server) {
  console.log('fault-clickhouse: skipped, no clickhouse-server binary on this machine (apt-get install clickhouse-server)');
  test.skip(TITLE, () => {});
} else {
  let ch: PrivateClickHouse | undefined;
  let p: TestPlatform | undefined;
  let capture: Subscription | undefined;

  test.after.always(async () => {
    await capture?.stop();
    await p?.stop();
    await ch?.destroy();
  });

  test(TITLE, async (t) => {
    t.timeout(110_000);
    ch = await startPrivateClickHouse();
    p = await startTestPlatform({
      CLICKHOUSE_URL: ch.url,
      CLICKHOUSE_DATABASE: `fault_usage_${process.pid}_${Date.now()}`,
      // Only refusals the test asks for: no rate limit or queue ceiling may turn a request into an untracked 429.
      RATE_SPEECH_PER_MINUTE: '100000',
      USER_QUEUE_MAX: '10000',
    });
    const platform = p;
    const bus = await platform.platform.service(coreServices.bus);
    const acct = await platform.bootstrap({ grant: { totalTokens: 10_000_000 } });

    // A second group on the same topic keeps a copy of every event, to re-publish later.
    const published: OutcomeEvent[] = [];
    capture = await bus.subscribe<OutcomeEvent>({
      topic: TOPICS.outcomes,
      group: `fault-test-capture-${process.pid}`,
      handler: async (message: BusMessage<OutcomeEvent>) => {
        published.push(message.value);
      },
    });

    const sent: Record<Kind, number> = { tts: 0, invalid: 0, clone: 0 };
    let n = 0;
    async function send(kind: Kind): Promise<void> {
      const i = n++;
      const res =
        kind === 'clone'
          ? await platform.api('/clone', { method: 'POST', key: acct.apiKey })
          : await platform.api('/tts', {
              method: 'POST',
              key: acct.apiKey,
              // Unique texts: a content-cache hit would answer another status.
              json: kind === 'tts' ? { text: `Câu số ${i} kiểm tra thống kê khi máy chủ dừng.` } : { text: `Câu số ${i}.`, voiceId: 'nobody' },
            });
      await res.arrayBuffer();
      t.is(res.status, EXPECTED_STATUS[kind], `${kind} request ${i}`);
      sent[kind]++;
    }
    /** `rounds` x (tts, invalid, clone), four requests in flight. */
    async function traffic(rounds: number): Promise<void> {
      const kinds: Kind[] = Array.from({ length: rounds }, () => ['tts', 'invalid', 'clone'] as Kind[]).flat();
      const lanes = Array.from({ length: 4 }, async (_, lane) => {
        for (let i = lane; i < kinds.length; i += 4) await send(kinds[i]!);
      });
      await Promise.all(lanes);
    }
    const total = () => sent.tts + sent.invalid + sent.clone;
    const usage = async () => {
      const res = await platform.api('/usage?scope=account', { key: acct.apiKey });
      return res.status === 200 ? ((await res.json()) as { totals: { requests: number; ok: number; queued: number; denied: number } }) : null;
    };
    const lag = async () => (await bus.lag(TOPICS.outcomes, GROUP)) + (await bus.lag(TOPICS.jobEvents, GROUP));

    // Traffic with the server up, then the server stops while traffic goes on.
    const before = traffic(15);
    await new Promise((r) => setTimeout(r, 150));
    await ch.stop();
    await before;
    await traffic(15);
    const whileDown = total();
    const heldBack = await bus.lag(TOPICS.outcomes, GROUP);
    t.true(heldBack > 0, `events published while ClickHouse is down stay uncommitted (lag ${heldBack})`);
    t.is(await usage(), null, 'GET /usage fails while ClickHouse is down');
    // ... as the service being unreachable (retry shortly), not as an internal error.
    const refused = await platform.api('/usage?scope=account', { key: acct.apiKey });
    t.is(refused.status, 503);
    t.is(refused.headers.get('retry-after'), '5');
    t.like(await refused.json(), { code: 'SERVICE_UNAVAILABLE' });

    // Back up; more traffic on top of the backlog.
    await ch.start();
    await traffic(5);
    const expected = total();
    t.is(expected, whileDown + 15);

    const settled = await waitFor(async () => {
      const report = await usage();
      return report && report.totals.requests === expected && report.totals.queued === 0 ? report : undefined;
    }, { timeoutMs: 60_000, intervalMs: 200, what: `usage to count all ${expected} requests with every job closed` });
    t.is(settled!.totals.ok, sent.tts, 'every queued /tts row closed as ok');
    t.is(settled!.totals.denied, sent.invalid + sent.clone);
    await waitFor(async () => (await lag()) === 0, { timeoutMs: 20_000, what: 'the aggregator lag to return to 0' });
    t.is(await lag(), 0);

    // No late doubles: the count holds after the retried batches have all landed.
    await new Promise((r) => setTimeout(r, 1500));
    t.is((await usage())?.totals.requests, expected, 'still exact after a further wait');

    // Redelivery: the same events again, through the bus as a replay would bring them.
    await waitFor(() => published.length === expected, { timeoutMs: 10_000, what: 'the capture group to see every event' });
    const replay = published.filter((_, i) => i % 3 === 0);
    await bus.publish(TOPICS.outcomes, replay.map((event) => ({ id: event.id, key: event.accountId ?? '', value: event })));
    await waitFor(async () => (await lag()) === 0, { timeoutMs: 20_000, what: 'the replayed events to be consumed' });
    const after = await usage();
    t.is(after?.totals.requests, expected, `re-published ${replay.length} events count once`);
    t.is(after?.totals.ok, sent.tts);
    t.is(after?.totals.queued, 0);
  });
}
